// The pending requests this process stored or read lately, by request ID: a hint that lets a vote skip reading the
// request before its check (issue 27: one Redis round trip less on the decision path). Never shown and never trusted
// alone. A vote checked on a copy is written only if the store's script finds the revision and route the check was
// made on still current (record-vote-5.lua), and every field the check reads (deciders.ts: mayDecide, maySee) is
// either fixed for the request's life or moves with that revision or route, or is the approver's own vote, which the
// script checks too. Any refusal met on a copy is not answered: the vote is checked again on the request as read now
// (VotesService.voteOn), so every refusal keeps its exact answer and audit.
// Bounded: the oldest entries go first; a vote forgets the request (its copy is stale once the vote is written).
import { Injectable } from '@nestjs/common';
import type { StoredApproval } from './approval-types';

/** The most copies kept: a few MB at most (a copy is its request with its arguments, and a few fields). */
export const RECENT_REQUESTS_KEPT = 5_000;

@Injectable()
export class RecentRequests {
  private readonly copies = new Map<string, StoredApproval>();

  /** Keeps a copy of a pending request as just stored or read; anything else is not kept (and any older copy goes). */
  remember(approval: StoredApproval): void {
    const { requestId } = approval.request;
    this.copies.delete(requestId);
    if (approval.status !== 'pending') return;
    this.copies.set(requestId, approval);
    if (this.copies.size > RECENT_REQUESTS_KEPT) this.copies.delete(this.copies.keys().next().value!);
  }

  /** The copy of the request with this request ID, if this process kept one. */
  get(requestId: string): StoredApproval | undefined {
    return this.copies.get(requestId);
  }

  forget(requestId: string): void {
    this.copies.delete(requestId);
  }
}
