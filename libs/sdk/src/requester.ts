// Whom an approval is for must be whom the call is for: an approval given for alice never runs bob's call, however the
// answer came about (a service that found the wrong approval, a proxy that rewrote the call). guard() and both
// adapters check it here themselves, and run nothing otherwise.
import type { ExternalApprovalView } from '@countersign/contracts/external-approvals.schema';
import { CountersignError } from './errors';

type Approval = Pick<ExternalApprovalView, 'approvalId' | 'requester' | 'client'>;

/**
 * Why `approval` is not the call's, or undefined when it is: a call for `onBehalfOf` needs an approval of that
 * requester; a call for no one (the client acting for itself) one whose requester is the client that submitted it.
 */
export function requesterMismatch(approval: Approval, onBehalfOf: string | undefined): string | undefined {
  const expected = onBehalfOf ?? approval.client;
  if (approval.requester === expected) return undefined;
  return `approval ${approval.approvalId} is ${approval.requester}'s, not ${expected}'s; not run`;
}

/** Throws (nothing may run) unless `approval` is for the call's requester; see requesterMismatch. */
export function checkRequester(approval: Approval, onBehalfOf: string | undefined): void {
  const mismatch = requesterMismatch(approval, onBehalfOf);
  if (mismatch) throw new CountersignError(mismatch);
}
