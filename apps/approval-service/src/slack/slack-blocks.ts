// Block Kit messages for a request (with Approve / Deny buttons), a manual-step notice (no buttons),
// and the outcome that replaces either once the request is settled.
import { trustSuggestion, type StoredApproval } from '../approvals/approval-store';

export const SlackAction = { Approve: 'countersign_approve', Deny: 'countersign_deny' } as const;

/** Button value: which request (and which attempt of its call) the button was shown for. */
export const buttonValue = (requestId: string, attempt: number) => `${requestId}|${attempt}`;

export function parseButtonValue(value: string): { requestId: string; attempt: number } | undefined {
  const match = /^([A-Za-z0-9_.@-]{1,128})\|(\d{1,3})$/.exec(value);
  return match ? { requestId: match[1], attempt: Number(match[2]) } : undefined;
}

export interface SlackMessage {
  text: string;
  blocks: Record<string, unknown>[];
}

type Shown = Pick<
  StoredApproval,
  'request' | 'expiresAt' | 'trustCount' | 'quorum' | 'status' | 'outcome' | 'votes'
>;

/** Slack mrkdwn needs only &, < and > escaped. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const MAX_ARGS_CHARS = 2_500;

function argsBlock(args: Record<string, unknown>): Record<string, unknown> {
  let text = JSON.stringify(args, null, 2);
  if (text.length > MAX_ARGS_CHARS)
    text = `${text.slice(0, MAX_ARGS_CHARS)}\n… (truncated; see the inbox for all arguments)`;
  return {
    type: 'section',
    text: { type: 'mrkdwn', text: `*Arguments*\n\`\`\`${escapeMrkdwn(text)}\`\`\`` },
  };
}

function detailsBlock(a: Shown): Record<string, unknown> {
  const r = a.request;
  const fields = [
    `*Tool*\n\`${escapeMrkdwn(r.toolName)}\``,
    `*Requester*\n${escapeMrkdwn(r.requester)}`,
    `*Agent*\n${escapeMrkdwn(r.agent)}`,
    `*Expires*\n<!date^${Math.floor(a.expiresAt / 1000)}^{date_short_pretty} {time}|${new Date(a.expiresAt).toISOString()}>`,
  ];
  return { type: 'section', fields: fields.map((text) => ({ type: 'mrkdwn', text })) };
}

export function requestMessage(a: Shown): SlackMessage {
  const r = a.request;
  if (r.reason === 'manual_step') return noticeMessage(a);
  const again =
    r.reason === 'interrupted'
      ? ' (asked again: a worker stopped while running the approved call)'
      : r.reason === 'definition_changed'
        ? ' (asked again: the tool changed since it was requested)'
        : '';
  const quorum = a.quorum > 1 ? ` Needs ${a.quorum} approvers.` : '';
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: `Approval needed: ${r.toolName}`.slice(0, 150) } },
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `*${escapeMrkdwn(r.requester)}*'s agent wants to run \`${escapeMrkdwn(r.toolName)}\`.${escapeMrkdwn(again)}${quorum}`,
      },
    },
    detailsBlock(a),
    argsBlock(r.args),
  ];
  const suggestion = trustSuggestion(a);
  if (suggestion)
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `:bulb: ${escapeMrkdwn(suggestion)}` }],
    });
  blocks.push({
    type: 'actions',
    block_id: `countersign-${r.callId}`.slice(0, 255),
    elements: [
      {
        type: 'button',
        action_id: SlackAction.Approve,
        style: 'primary',
        text: { type: 'plain_text', text: 'Approve' },
        value: buttonValue(r.requestId, r.attempt),
      },
      {
        type: 'button',
        action_id: SlackAction.Deny,
        style: 'danger',
        text: { type: 'plain_text', text: 'Deny' },
        value: buttonValue(r.requestId, r.attempt),
      },
    ],
  });
  return { text: `Approval needed: ${r.toolName} requested by ${r.requester}`, blocks };
}

export function noticeMessage(a: Shown): SlackMessage {
  const r = a.request;
  return {
    text: `Manual step required: ${r.toolName} for ${r.requester}`,
    blocks: [
      {
        type: 'header',
        text: { type: 'plain_text', text: `Manual step required: ${r.toolName}`.slice(0, 150) },
      },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `The agent may not run \`${escapeMrkdwn(r.toolName)}\` itself; a person must do it if it should be done.`,
        },
      },
      detailsBlock(a),
      argsBlock(r.args),
    ],
  };
}

/** Who decided, in words: "Approved by bob", "Denied by carol: not now", "Denied: expired". */
export function outcomeText(a: Pick<Shown, 'outcome'>): string {
  const o = a.outcome;
  if (!o) return 'Settled';
  const verb = o.decision === 'approve' ? 'Approved' : 'Denied';
  if (o.decidedBy === 'expired') return 'Denied: expired (nobody decided in time)';
  if (o.decidedBy === 'no_route') return 'Denied: no approver route';
  const by = o.approvers.length ? ` by ${o.approvers.join(', ')}` : '';
  return `${verb}${by}${o.reason ? `: ${o.reason}` : ''}`;
}

export function outcomeMessage(a: Shown): SlackMessage {
  const r = a.request;
  const icon = a.outcome?.decision === 'approve' ? ':white_check_mark:' : ':no_entry:';
  const verdict = a.request.reason === 'manual_step' ? 'Notice closed' : outcomeText(a);
  return {
    text: `${r.toolName} for ${r.requester}: ${verdict}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: `${r.toolName}: ${verdict}`.slice(0, 150) } },
      detailsBlock(a),
      argsBlock(r.args),
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${icon} *${escapeMrkdwn(verdict)}*` }] },
    ],
  };
}
