// What a client (and its model) reads when the gateway answers in the tool's place: the call waits for approval, was
// refused, was answered by an approver's response, must be done by a person, or could not be decided. Every one is an
// error result (`isError`): the tool did not produce it, and a client that checks a tool's output schema skips error
// results (a respond's text in a non-error result would fail that check and never reach the model). `_meta` says the same for
// programs: `countersign/approval` holds the approval's state.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { refusalMessage, responseMessage } from '@countersign/authorization';
import type { ExternalApprovalView } from '@countersign/contracts';
import { capText, mcpResultText } from '@countersign/tool-providers';

/** The `_meta` key of a gateway answer about an approval. */
export const APPROVAL_META = 'countersign/approval';

/** Results kept for identical calls larger than this are kept as text, cut (with a note saying so). */
export const MAX_KEPT_RESULT_BYTES = 1024 * 1024;

export function errorResult(text: string, meta?: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true, ...(meta ? { _meta: meta } : {}) };
}

function approvalMeta(view: ExternalApprovalView, status: string): Record<string, unknown> {
  return {
    [APPROVAL_META]: {
      approvalId: view.approvalId,
      status,
      expiresAt: view.expiresAt,
      inboxUrl: view.inboxUrl,
      ...(view.decidedBy ? { decidedBy: view.decidedBy } : {}),
    },
  };
}

/** The call waits for a person: how to get its result (call again, identically), and where it is decided. */
export function pendingResult(toolName: string, view: ExternalApprovalView): CallToolResult {
  return errorResult(
    `Tool "${toolName}" is waiting for approval: a person must approve this call before it runs, and it has not run. ` +
      `Approvers decide it in Countersign's inbox (${view.inboxUrl}); the request expires at ${view.expiresAt}. ` +
      'To get the result once it is approved, call this tool again with exactly the same arguments: the same call ' +
      'attaches to the same approval and runs once. A call with other arguments is a new request.',
    approvalMeta(view, 'pending'),
  );
}

/** Refused by a person (with the reason), by expiry, or for want of an approver route: it never runs. */
export function refusedResult(view: ExternalApprovalView): CallToolResult {
  const text = refusalMessage({
    decidedBy: view.decidedBy ?? 'person',
    reason: view.reason,
  });
  return errorResult(`${text} It was not run.`, approvalMeta(view, 'denied'));
}

/**
 * An approver responded with text instead of a verdict: the call never runs, and the model reads their words (marked
 * as theirs, naming who) so it re-plans. `_meta` status `responded`, with the text as `response`.
 */
export function respondedResult(toolName: string, view: ExternalApprovalView): CallToolResult {
  const meta = approvalMeta(view, 'responded');
  (meta[APPROVAL_META] as Record<string, unknown>).response = view.response ?? '';
  return errorResult(responseMessage(toolName, view), meta);
}

export function manualResult(toolName: string): CallToolResult {
  return errorResult(
    `Tool "${toolName}" must be done by a person: it is manual-only, and Countersign never runs it for an agent. ` +
      'Nothing was sent to its server; ask a person to do this step.',
  );
}

/** The approval was claimed, but no outcome was recorded: a gateway stopped while running it. It is never run again. */
export function unknownOutcomeResult(toolName: string, view: ExternalApprovalView): CallToolResult {
  const when = view.claim ? ` at ${view.claim.claimedAt}` : '';
  return errorResult(
    `Tool "${toolName}" was approved and taken to run${when}, but its result was never recorded (the gateway ` +
      'running it stopped): it may or may not have run, and it will not be run again.',
    approvalMeta(view, 'claimed'),
  );
}

/** The result as kept for identical calls: as it came, unless it is too large to keep (then its text, cut). */
export function keptResult(result: CallToolResult): CallToolResult {
  const json = JSON.stringify(result);
  if (Buffer.byteLength(json) <= MAX_KEPT_RESULT_BYTES) return result;
  const text = capText(mcpResultText(result), MAX_KEPT_RESULT_BYTES - 1024);
  return { content: [{ type: 'text', text }], ...(result.isError ? { isError: true } : {}) };
}
