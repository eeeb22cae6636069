// Block Kit messages for a request (with Approve / Deny buttons), a manual-step notice (no buttons),
// and the outcome that replaces either once the request is settled. Each shows the same context as the inbox
// (approval-context.ts): what the run is for, the tool, its preview, the route, who voted and the time left.
import { RESPONSE_MAX_CHARS } from '@countersign/contracts';
import { contextLines, editedHow, outcomeInWords } from '../../requests/approval-context';
import type { StoredApproval } from '../../requests/approval-types';
import { trustSuggestion } from '../../requests/approval-views';

export const SlackAction = {
  Approve: 'countersign_approve',
  Deny: 'countersign_deny',
  /** Opens a modal asking for the text to respond with instead of a verdict (see respondModal). */
  Respond: 'countersign_respond',
  /** A link button to the inbox (edit the arguments, make a standing rule): Slack reports its click too. */
  OpenInbox: 'countersign_open_inbox',
} as const;

/**
 * Button value: which request, which attempt of its call and which revision of its arguments the button was shown for
 * (a click on a button of an earlier revision is refused: the arguments were edited since).
 */
export const buttonValue = (requestId: string, attempt: number, rev = 0) =>
  rev === 0 ? `${requestId}|${attempt}` : `${requestId}|${attempt}|${rev}`;

export function parseButtonValue(
  value: string,
): { requestId: string; attempt: number; rev: number } | undefined {
  const match = /^([A-Za-z0-9_.@-]{1,128})\|(\d{1,3})(?:\|(\d{1,4}))?$/.exec(value);
  return match ? { requestId: match[1], attempt: Number(match[2]), rev: Number(match[3] ?? 0) } : undefined;
}

/** The respond modal: its callback ID, and where its text input is in the submission's `view.state.values`. */
export const RespondModal = {
  callbackId: 'countersign_respond',
  blockId: 'response',
  actionId: 'text',
} as const;

/**
 * The modal the Respond button opens: one text input. `private_metadata` carries the button's value (which request,
 * attempt and revision the button was shown for) and the channel to answer in; Slack returns it with the submission,
 * and the vote is checked as any other (mayDecide, the revision shown) when it comes.
 */
export function respondModal(toolName: string, value: string, channel?: string): Record<string, unknown> {
  return {
    type: 'modal',
    callback_id: RespondModal.callbackId,
    private_metadata: JSON.stringify({ value, ...(channel ? { channel } : {}) }),
    title: { type: 'plain_text', text: 'Respond' },
    submit: { type: 'plain_text', text: 'Send response' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `Answer instead of approving or denying: \`${escapeMrkdwn(toolName)}\` does not run, and the agent is given your text (naming you) as its result, so it re-plans.`,
        },
      },
      {
        type: 'input',
        block_id: RespondModal.blockId,
        label: { type: 'plain_text', text: 'Your response' },
        element: {
          type: 'plain_text_input',
          action_id: RespondModal.actionId,
          multiline: true,
          min_length: 1,
          max_length: RESPONSE_MAX_CHARS,
          placeholder: { type: 'plain_text', text: 'Not like this: restart only the canary first' },
        },
      },
    ],
  };
}

export interface SlackMessage {
  text: string;
  blocks: Record<string, unknown>[];
}

type Shown = Pick<
  StoredApproval,
  'request' | 'expiresAt' | 'trustCount' | 'quorum' | 'status' | 'outcome' | 'votes'
> &
  Partial<Pick<StoredApproval, 'route' | 'tool' | 'edited' | 'done'>>;

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

/** Requester, agent and the shared context lines, as fields (Slack allows 10, of at most 2,000 characters). */
function detailsBlock(a: Shown, now = Date.now()): Record<string, unknown> {
  const r = a.request;
  const fields = [
    `*Requester*\n${escapeMrkdwn(r.requester)} (agent ${escapeMrkdwn(r.agent)})`,
    ...contextLines({ ...a, route: a.route, tool: a.tool }, now).map(
      (line) =>
        `*${escapeMrkdwn(line.label)}*\n${line.kind === 'preview' ? '*' : ''}${escapeMrkdwn(line.text)}${line.kind === 'preview' ? '*' : ''}`,
    ),
  ];
  return {
    type: 'section',
    fields: fields.slice(0, 10).map((text) => ({ type: 'mrkdwn', text: text.slice(0, 1_900) })),
  };
}

/** The arguments shown now: an approver's edit, if there is one. */
const shownArgs = (a: Shown) => a.edited?.args ?? a.request.args;

function editedBlock(a: Shown): Record<string, unknown>[] {
  if (!a.edited) return [];
  const text = `:pencil2: Edited by *${escapeMrkdwn(a.edited.by)}*${editedHow(a)}; the agent asked for \`${escapeMrkdwn(JSON.stringify(a.request.args))}\`. Approvals of the earlier arguments do not count.`;
  return [{ type: 'context', elements: [{ type: 'mrkdwn', text: text.slice(0, 2_900) }] }];
}

/** `inboxUrl`: where the Edit button leads (the inbox's edit form); without it there is no such button. */
export function requestMessage(a: Shown, inboxUrl?: string): SlackMessage {
  const r = a.request;
  if (r.reason === 'manual_step') return noticeMessage(a);
  const again =
    r.reason === 'interrupted'
      ? ' (asked again: a worker stopped while running the approved call)'
      : r.reason === 'definition_changed'
        ? ' (asked again: the tool changed since it was requested)'
        : r.reason === 'precondition_changed'
          ? ' (asked again: the world changed since the earlier approval, see Precondition)'
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
    ...editedBlock(a),
    argsBlock(shownArgs(a)),
  ];
  const suggestion = trustSuggestion(a);
  if (suggestion)
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `:bulb: ${escapeMrkdwn(suggestion)}${inboxUrl ? ` (a rule-writer can make it in the <${inboxUrl}|inbox>)` : ''}`,
        },
      ],
    });
  const rev = a.edited?.rev ?? 0;
  blocks.push({
    type: 'actions',
    block_id: `countersign-${r.callId}`.slice(0, 255),
    elements: [
      {
        type: 'button',
        action_id: SlackAction.Approve,
        style: 'primary',
        text: { type: 'plain_text', text: 'Approve' },
        value: buttonValue(r.requestId, r.attempt, rev),
      },
      {
        type: 'button',
        action_id: SlackAction.Deny,
        style: 'danger',
        text: { type: 'plain_text', text: 'Deny' },
        value: buttonValue(r.requestId, r.attempt, rev),
      },
      {
        type: 'button',
        action_id: SlackAction.Respond,
        text: { type: 'plain_text', text: 'Respond…' },
        value: buttonValue(r.requestId, r.attempt, rev),
      },
      ...(inboxUrl
        ? [
            {
              type: 'button',
              action_id: SlackAction.OpenInbox,
              text: { type: 'plain_text', text: 'Edit in the inbox' },
              url: inboxUrl,
            },
          ]
        : []),
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

export function outcomeMessage(a: Shown): SlackMessage {
  const r = a.request;
  const approved = a.outcome?.decision === 'approve' || a.done !== undefined;
  const icon = approved ? ':white_check_mark:' : ':no_entry:';
  const verdict = outcomeInWords(a);
  const ran = a.outcome?.args ?? r.args;
  return {
    text: `${r.toolName} for ${r.requester}: ${verdict}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: `${r.toolName}: ${verdict}`.slice(0, 150) } },
      detailsBlock(a),
      ...editedBlock(a),
      argsBlock(ran),
      { type: 'context', elements: [{ type: 'mrkdwn', text: `${icon} *${escapeMrkdwn(verdict)}*` }] },
    ],
  };
}
