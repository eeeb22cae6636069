// Every way a vote can be refused: the Lua scripts' negative codes and the refusals of mayDecide (deciders.ts), mapped
// to typed errors in one place.
import type { Refusal } from './deciders';

export enum ErrorCode {
  NotFound = -1,
  AlreadyDecided = -2,
  NotInGroup = -3,
  SelfApproval = -4,
  AlreadyVoted = -5,
  TokenSpent = -6,
  Expired = -7,
  Superseded = -8,
  Notice = -9,
  Edited = -10,
  NotANotice = -11,
  RouteChanged = -12,
}

/** The audit `reason` of a refused vote. */
export const REJECTION_REASON: Record<ErrorCode, string> = {
  [ErrorCode.NotFound]: 'unknown_call',
  [ErrorCode.AlreadyDecided]: 'already_decided',
  [ErrorCode.NotInGroup]: 'unauthorized_approver',
  [ErrorCode.SelfApproval]: 'self_approval',
  [ErrorCode.AlreadyVoted]: 'already_voted',
  [ErrorCode.TokenSpent]: 'replayed_token',
  [ErrorCode.Expired]: 'expired',
  [ErrorCode.Superseded]: 'superseded',
  [ErrorCode.Notice]: 'manual_step_notice',
  [ErrorCode.Edited]: 'arguments_edited',
  [ErrorCode.NotANotice]: 'not_a_notice',
  [ErrorCode.RouteChanged]: 'route_changed',
};

/** A vote that was refused; `message` is safe to show to the approver. */
export class VoteRefusedError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = this.constructor.name;
  }

  get reason(): string {
    return REJECTION_REASON[this.code];
  }
}

/**
 * Turns a script's negative reply into the error an approver is shown. (NOT_IN_GROUP and SELF_APPROVAL come from
 * mayDecide, not from a script: see decideRefusal.)
 */
export function voteRefusal(reply: (string | number)[], id: string): VoteRefusedError {
  const code = Number(reply[0]) as ErrorCode;
  switch (code) {
    case ErrorCode.NotFound:
      return new VoteRefusedError(code, `no approval request ${id}`);
    case ErrorCode.AlreadyDecided: {
      const decidedBy = String(reply[1]);
      const approvers = String(reply[2] ?? '');
      if (decidedBy === 'expired') return new VoteRefusedError(code, 'already decided: the request expired');
      if (decidedBy === 'no_route') return new VoteRefusedError(code, 'already decided: no approver route');
      return new VoteRefusedError(code, `already decided by ${approvers.split(',').join(', ') || decidedBy}`);
    }
    case ErrorCode.AlreadyVoted:
      return new VoteRefusedError(code, 'you already voted on this request; it needs a different approver');
    case ErrorCode.TokenSpent:
      return new VoteRefusedError(code, 'this link has already been used');
    case ErrorCode.Expired:
      return new VoteRefusedError(code, 'the request has expired');
    case ErrorCode.Superseded:
      return new VoteRefusedError(code, 'this request was asked again; use the newer message');
    case ErrorCode.Notice:
      return new VoteRefusedError(code, 'this is a manual-step notice; there is nothing to approve');
    case ErrorCode.Edited:
      return new VoteRefusedError(
        code,
        'an approver edited the arguments since you looked; look again and decide on the edited call',
      );
    case ErrorCode.RouteChanged:
      return new VoteRefusedError(
        code,
        'the request was routed anew or escalated while your vote was checked; look again and decide again',
      );
    default:
      throw new Error(`unexpected reply from record-vote: ${JSON.stringify(reply)}`);
  }
}

/** The error a person is shown when mayDecide refuses them (a standing rule's refusals are the rule-writer's). */
export function decideRefusal(refusal: Refusal, message: string): VoteRefusedError {
  const code = {
    self_approval: ErrorCode.SelfApproval,
    not_in_group: ErrorCode.NotInGroup,
    already_voted: ErrorCode.AlreadyVoted,
  }[refusal as 'self_approval' | 'not_in_group' | 'already_voted'];
  if (code === undefined) throw new Error(`a person is never refused as "${refusal}"`);
  return new VoteRefusedError(code, message);
}

/** Turns complete-notice's negative reply into the error the approver is shown. */
export function noticeRefusal(reply: (string | number)[], id: string): VoteRefusedError {
  const code = Number(reply[0]) as ErrorCode;
  switch (code) {
    case ErrorCode.AlreadyDecided: {
      const by = String(reply[1] ?? '');
      return new VoteRefusedError(
        code,
        by === 'expired' ? 'the notice has expired' : `already marked done by ${by}`,
      );
    }
    case ErrorCode.NotANotice:
      return new VoteRefusedError(
        code,
        'this request asks for a decision, not a manual step; approve or deny it',
      );
    default:
      return voteRefusal(reply, id);
  }
}
