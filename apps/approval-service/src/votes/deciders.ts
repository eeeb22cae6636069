// Who may decide a revision of a request, and who may see it: the one rule behind every vote path (REST, CLI, inbox,
// Slack, email link), marking a manual step done, a standing rule deciding (when it is written and when a call
// matches it), and what an inbox card offers. Pure: callers read the request and the decider's groups, ask here, and
// the store's scripts only check, in the same step as the write, that the revision and route the answer was given
// for are still current (record-vote-5.lua), so a concurrent edit, escalation or decision refuses the vote.
import { RUNBOOK_GATE_TOOL } from '@countersign/contracts';
import type { StoredApproval } from '../requests/approval-types';

/** A revision as the rule sees it: who asked, and the route and votes the request has now. */
export interface Revision {
  toolName: string;
  requester: string;
  /** The machine client that submitted the call for the requester, if one did: it never decides it either. */
  submittedBy?: string;
  /** The groups of the revision's route; the escalation groups are among them once the request escalated. */
  groups: readonly string[];
  quorum: number;
  /** Who voted on this revision (votes on earlier revisions are set aside and do not count). */
  voters: readonly string[];
}

/** A principal as the rules see them: their ID and the groups the principal directory gives them. */
export interface Caller {
  id: string;
  groups: readonly string[];
}

/** A person with the groups the principal directory gives them, or a standing rule with its author. */
export type Decider =
  { kind: 'person'; id: string; groups: readonly string[] } | { kind: 'standing_rule'; author: string };

export type Refusal =
  'self_approval' | 'not_in_group' | 'already_voted' | 'needs_people' | 'human_checkpoint';

export type Verdict = { allowed: true } | { allowed: false; refusal: Refusal; message: string };

const ALLOWED: Verdict = { allowed: true };
const refuse = (refusal: Refusal, message: string): Verdict => ({ allowed: false, refusal, message });

/**
 * Whether `decider` may decide `revision`. A person: never the requester (nor the client that submitted the call),
 * only a member of one of the revision's groups, and once per revision (a quorum counts distinct approvers). A
 * standing rule: never for its author's own calls, never a runbook gate (a human checkpoint), and only a route that
 * one decider settles (quorum 1): a rule is one decider, so a route that needs more is left to people.
 */
export function mayDecide(decider: Decider, revision: Revision): Verdict {
  if (decider.kind === 'standing_rule') return ruleMayDecide(decider.author, revision);
  if (decider.id === revision.requester || decider.id === revision.submittedBy)
    return refuse('self_approval', 'you cannot decide on your own request');
  if (!decider.groups.some((g) => revision.groups.includes(g)))
    return refuse('not_in_group', 'you are not an approver for this request');
  if (revision.voters.includes(decider.id))
    return refuse('already_voted', 'you already voted on this request; it needs a different approver');
  return ALLOWED;
}

function ruleMayDecide(author: string, revision: Revision): Verdict {
  if (author === revision.requester)
    return refuse(
      'self_approval',
      'a standing rule may not cover your own calls (the requester never decides)',
    );
  if (revision.toolName === RUNBOOK_GATE_TOOL)
    return refuse(
      'human_checkpoint',
      `tool: ${RUNBOOK_GATE_TOOL} is a runbook's human checkpoint: a person must pass it, so no rule may decide it`,
    );
  if (revision.quorum > 1)
    return refuse(
      'needs_people',
      `its route needs ${revision.quorum} approvers; a standing rule is one decider, so people decide`,
    );
  return ALLOWED;
}

/** The current revision of a stored request. */
export function revisionOf(a: Pick<StoredApproval, 'request' | 'groups' | 'quorum' | 'votes'>): Revision {
  return {
    toolName: a.request.toolName,
    requester: a.request.requester,
    submittedBy: a.request.submittedBy,
    groups: a.groups,
    quorum: a.quorum,
    voters: a.votes.map((v) => v.approver),
  };
}

/** Whether the request is routed to one of these groups now (what waits in an approver's inbox). */
export function routedTo(groups: readonly string[], a: Pick<StoredApproval, 'groups'>): boolean {
  return a.groups.some((g) => groups.includes(g));
}

/**
 * Whether a principal may read a request: it is routed to one of their groups now, or they took part in it (voted,
 * also on an earlier revision; edited it; did its manual step). Anything else answers 404, like an unknown request.
 */
export function maySee(
  viewer: Caller,
  a: Pick<StoredApproval, 'groups' | 'votes' | 'setAside' | 'edited' | 'done'>,
): boolean {
  if (routedTo(viewer.groups, a)) return true;
  const tookPart = [...a.votes, ...a.setAside].some((v) => v.approver === viewer.id);
  return tookPart || a.edited?.by === viewer.id || a.done?.by === viewer.id;
}
