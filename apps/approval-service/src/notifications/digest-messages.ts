// The texts of a digest: one Slack message per channel, one email per approver, for the requests of one requester in
// one window that were not sent one by one. No buttons and no links that decide: the requests are decided in the
// inbox (or the API), where each one shows with its arguments.
import { escapeHtml } from '../core/html';
import type { Mail } from './email/email-notifier';
import { escapeMrkdwn, type SlackMessage } from './slack/slack-blocks';

export interface Digest {
  /** The requester's ID, and name when the directory knows one. */
  requester: { id: string; name?: string };
  /** Requests of the requester in the window that this target was not sent one by one. */
  count: number;
  windowStart: number;
  windowMs: number;
  inboxUrl: string;
}

/** The text all forms share, e.g. "12 more approval requests from Alice (alice) arrived between 10:00:00 and …". */
export function digestSummary(d: Digest): string {
  const who =
    d.requester.name && d.requester.name !== d.requester.id
      ? `${d.requester.name} (${d.requester.id})`
      : d.requester.id;
  const what = d.count === 1 ? '1 more approval request' : `${d.count} more approval requests`;
  const from = new Date(d.windowStart).toISOString();
  const to = new Date(d.windowStart + d.windowMs).toISOString();
  return `${what} from ${who} arrived between ${from} and ${to}.`;
}

const WHY =
  "They were not sent one by one, so that one requester cannot bury everyone else's requests. " +
  'Those still open wait in the inbox, where each shows with its arguments, to be decided there or with the CLI.';

export function digestSlackMessage(d: Digest): SlackMessage {
  const summary = digestSummary(d);
  return {
    text: `${summary} Open the inbox: ${d.inboxUrl}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${escapeMrkdwn(summary)}*\n${escapeMrkdwn(WHY)}` } },
      { type: 'section', text: { type: 'mrkdwn', text: `<${d.inboxUrl}|Open the inbox>` } },
    ],
  };
}

export function digestMail(d: Digest, to: string): Mail {
  const summary = digestSummary(d);
  return {
    to,
    subject: `[Countersign] Digest: ${d.count === 1 ? '1 more approval request' : `${d.count} more approval requests`} from ${d.requester.id}`,
    text: `${summary}\n\n${WHY}\n\nOpen the inbox: ${d.inboxUrl}\n`,
    html: `<p><b>${escapeHtml(summary)}</b></p><p>${escapeHtml(WHY)}</p><p><a href="${escapeHtml(d.inboxUrl)}">Open the inbox</a></p>`,
  };
}
