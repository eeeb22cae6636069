// guard(): the one way code Countersign does not run should run a call that needs approval. The call runs only if
// Countersign approved exactly these arguments for this requester and this process's claim is the first, so a process
// that restarts and guards the same call again reattaches to the same approval and never runs a call that was already
// claimed.
import { fingerprint } from '@countersign/authorization/fingerprint';
import type { ExternalApprovalView } from '@countersign/contracts/external-approvals.schema';
import type { CountersignClient, ExternalCall, RequesterOptions } from './countersign-client';
import { CountersignError } from './errors';
import { checkRequester } from './requester';

/** Runs the approved call: `args` are the arguments as approved (the same as the call's, by fingerprint). */
export type GuardedExecute<T> = (
  args: Record<string, unknown>,
  approval: { approvalId: string },
) => Promise<T> | T;

export interface GuardOptions<T> {
  /**
   * How long to wait for the decision.
   * @defaultValue until the approval's expiry (and a minute more), when the service decides it (expired)
   */
  timeoutMs?: number;
  /** Stops waiting: the result is `pending`, and nothing ran. */
  signal?: AbortSignal;
  /**
   * A short summary of the result for the audit log's completion entry (at most 500 characters are sent).
   * @defaultValue none: the tool's output is not sent to Countersign
   */
  summarize?: (value: T) => string;
}

/**
 * - `executed`: approved, claimed here, run; `reported` is false when the completion report could not be sent.
 * - `denied`: refused by a person (or for want of an approver route); `reason` says why.
 * - `responded`: an approver answered with text instead of a verdict (`response`, by `approvers`); it was not run.
 *   Give the text to the model as the call's result (notRunMessage words it), so it re-plans.
 * - `expired`: nobody decided in time; it was not run.
 * - `pending`: no decision before the timeout or the signal; guard the same call again later to reattach.
 * - `already_claimed`: approved, but claimed earlier (by another process, or this one before a restart): not run here.
 */
export type GuardResult<T> =
  | { status: 'executed'; approvalId: string; value: T; reported: boolean }
  | { status: 'denied'; approvalId: string; reason?: string; decidedBy?: string }
  | { status: 'responded'; approvalId: string; toolName: string; response: string; approvers: string[] }
  | { status: 'expired'; approvalId: string }
  | { status: 'pending'; approvalId: string; expiresAt: string; inboxUrl: string }
  | {
      status: 'already_claimed';
      approvalId: string;
      claimedAt?: string;
      completion?: { outcome: 'ok' | 'error'; summary?: string };
    };

export async function guardCall<T>(
  client: CountersignClient,
  call: ExternalCall,
  execute: GuardedExecute<T>,
  options: GuardOptions<T> = {},
): Promise<GuardResult<T>> {
  const expected = fingerprint(call.toolName, call.args);
  const who: RequesterOptions = { onBehalfOf: call.onBehalfOf };
  // Every answer must be this call's approval: these arguments, for this requester.
  const checked = (view: ExternalApprovalView) => {
    if (view.fingerprint !== expected)
      throw new CountersignError(
        `approval ${view.approvalId} is for another fingerprint than this call's; not run`,
      );
    checkRequester(view, call.onBehalfOf);
    return view;
  };
  let view = checked(await client.submit(call));
  // timeoutMs 0: the answer to the submission is the decision (the adapters' execute never waits).
  if (view.status === 'pending' && options.timeoutMs !== 0)
    view = checked(
      await client.waitForDecision(view.approvalId, {
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        ...who,
      }),
    );
  const { approvalId } = view;
  if (view.status !== 'allow') return unapproved(view);
  if (view.claim) return alreadyClaimed(view);

  const claimed = await client.claim(approvalId, expected, who);
  if (claimed.status === 'refused') {
    switch (claimed.reason) {
      case 'already_claimed':
        return alreadyClaimed(await client.get(approvalId, who));
      case 'expired':
        return { status: 'expired', approvalId };
      case 'denied':
        return { status: 'denied', approvalId };
      default:
        throw new CountersignError(`claim of ${approvalId} refused: ${claimed.message}`);
    }
  }
  // The service checked the fingerprint; checked again here, so a wrong answer can never run other arguments.
  const { claim } = claimed;
  if (fingerprint(claim.toolName, claim.args) !== expected || claim.toolName !== call.toolName)
    throw new CountersignError(`the claimed call of ${approvalId} is not this call; not run`);
  checkRequester({ approvalId, requester: claim.requester, client: view.client }, call.onBehalfOf);

  let value: T;
  try {
    value = await execute(claim.args, { approvalId });
  } catch (error) {
    await report(client, approvalId, who, 'error', error instanceof Error ? error.message : String(error));
    throw error;
  }
  const reported = await report(client, approvalId, who, 'ok', options.summarize?.(value));
  return { status: 'executed', approvalId, value, reported };
}

function unapproved<T>(view: ExternalApprovalView): GuardResult<T> {
  const { approvalId } = view;
  if (view.status === 'pending')
    return { status: 'pending', approvalId, expiresAt: view.expiresAt, inboxUrl: view.inboxUrl };
  if (view.status === 'respond')
    return {
      status: 'responded',
      approvalId,
      toolName: view.toolName,
      response: view.response ?? '',
      approvers: view.approvers ?? [],
    };
  if (view.decidedBy === 'expired') return { status: 'expired', approvalId };
  return { status: 'denied', approvalId, reason: view.reason, decidedBy: view.decidedBy };
}

function alreadyClaimed<T>(view: ExternalApprovalView): GuardResult<T> {
  return {
    status: 'already_claimed',
    approvalId: view.approvalId,
    claimedAt: view.claim?.claimedAt,
    completion: view.claim?.completion && {
      outcome: view.claim.completion.outcome,
      summary: view.claim.completion.summary,
    },
  };
}

/** The completion report; the call already ran, so a failure to report is returned, never thrown. */
async function report(
  client: CountersignClient,
  approvalId: string,
  who: RequesterOptions,
  outcome: 'ok' | 'error',
  summary: string | undefined,
): Promise<boolean> {
  try {
    await client.complete(approvalId, { outcome, summary: summary?.slice(0, 500) }, who);
    return true;
  } catch {
    return false;
  }
}
