// Turns a vote as a channel hands it in into one the store may write, against the request as the caller read it: who
// may decide (deciders.ts), what the approver saw, and edited arguments checked against the tool's schema and routed
// like a new request (routeRequest). The store then writes it only if that revision and route are still current.
import { Injectable } from '@nestjs/common';
import { fingerprint } from '@countersign/authorization';
import type { DecisionValue } from '@countersign/contracts';
import { ToolCatalog } from '@countersign/shared-records';
import type { RevisionRoute, StoredApproval, VoteChannel } from '../requests/approval-types';
import { RequestRouter } from '../requests/routing/request-router';
import type { Route } from '../requests/routing/route-request';
import { mayDecide, revisionOf, type Decider, type Revision } from './deciders';
import { EditedArgsCheck, UnroutableEditError } from './edited-args';
import { decideRefusal, ErrorCode, VoteRefusedError } from './vote-errors';
import type { CheckedVote } from './vote-store';

/** A vote as a channel hands it in: with the arguments as the approver edited them, if they did. */
export interface VoteRequest {
  requestId: string;
  approver: string;
  /** The approver's groups (from the principal directory). */
  approverGroups: string[];
  decision: DecisionValue;
  reason?: string;
  /** Decision "respond" (required with it): the approver's text, validated by the channel (ResponseTextSchema). */
  response?: string;
  channel: VoteChannel;
  /** The attempt a Slack button or email link was made for; undefined = the request's. */
  attempt?: number;
  /** The ID of a single-use link token spent by this vote (its decoded MAC: one token, however spelled). */
  singleUseToken?: string;
  /** What the approver was shown: refused when the arguments were edited since (Slack, email: rev; inbox, API: fingerprint). */
  seen?: { rev?: number; fingerprint?: string };
  /** Approve only: the arguments as the approver edited them. */
  editedArgs?: Record<string, unknown>;
}

@Injectable()
export class VoteCheck {
  private readonly editCheck = new EditedArgsCheck();

  constructor(
    private readonly router: RequestRouter,
    private readonly tools: ToolCatalog,
  ) {}

  /**
   * The vote, checked against `approval` (the request as read). Throws VoteRefusedError when the approver may not
   * decide its current revision or saw another one, InvalidEditError when edited arguments do not fit the tool, and
   * UnroutableEditError when no route takes them. A request that is no longer pending is left to the store's script,
   * which refuses it (after a link's single use, so a used link says so).
   */
  async check(vote: VoteRequest, approval: StoredApproval, now = Date.now()): Promise<CheckedVote> {
    const shown = shownRevision(approval);
    const person: Decider = { kind: 'person', id: vote.approver, groups: vote.approverGroups };
    const open = approval.status === 'pending';
    if (open) {
      assertAllowed(person, revisionOf(approval));
      assertSeen(vote.seen, shown);
    }
    const edit =
      open && vote.editedArgs
        ? await this.revise(approval, vote.editedArgs, shown.fingerprint, now)
        : undefined;
    const counts = !edit || mayDecide(person, editedRevision(approval, edit.route)).allowed;
    return {
      requestId: vote.requestId,
      approver: vote.approver,
      decision: vote.decision,
      reason: vote.reason,
      ...(vote.decision === 'respond' ? { response: vote.response } : {}),
      channel: vote.channel,
      attempt: vote.attempt,
      singleUseToken: vote.singleUseToken,
      checked: { rev: shown.rev, routeVersion: approval.routeVersion },
      edit,
      counts,
    };
  }

  /**
   * Edited arguments as a new revision with its route; undefined when they are the arguments shown (a plain vote).
   * An edit must fit the tool's argument schema (from the tool catalog) before anyone sees it; the worker checks it
   * again before anything runs.
   */
  private async revise(
    approval: StoredApproval,
    args: Record<string, unknown>,
    shownFingerprint: string,
    now: number,
  ): Promise<CheckedVote['edit']> {
    const { request } = approval;
    const hash = request.toolDefinitionHash;
    const tool = (await this.tools.get([hash])).get(hash);
    this.editCheck.assertValid(hash, tool, args);
    const edited = fingerprint(request.toolName, args);
    if (edited === shownFingerprint) return undefined;
    const route = this.router.route({ ...request, args });
    if (!route) throw new UnroutableEditError(args);
    const revisionRoute = toRevisionRoute(route, approval.expiresAt, now);
    return { args, fingerprint: edited, route: revisionRoute, rerouted: !keepsRoute(approval, route) };
  }
}

/** The revision the request shows now: its number (0: as the agent asked) and fingerprint. */
function shownRevision(approval: StoredApproval): { rev: number; fingerprint: string } {
  return {
    rev: approval.edited?.rev ?? 0,
    fingerprint: approval.edited?.fingerprint ?? approval.request.fingerprint,
  };
}

function assertAllowed(decider: Decider, revision: Revision): void {
  const verdict = mayDecide(decider, revision);
  if (!verdict.allowed) throw decideRefusal(verdict.refusal, verdict.message);
}

function assertSeen(seen: VoteRequest['seen'], shown: { rev: number; fingerprint: string }): void {
  const moved =
    (seen?.rev !== undefined && seen.rev !== shown.rev) ||
    (seen?.fingerprint !== undefined && seen.fingerprint !== shown.fingerprint);
  if (moved)
    throw new VoteRefusedError(
      ErrorCode.Edited,
      'an approver edited the arguments since you looked; look again and decide on the edited call',
    );
}

/** The revision an edit makes: its route's groups and quorum, and no votes yet. */
function editedRevision(approval: StoredApproval, route: RevisionRoute): Revision {
  return { ...revisionOf(approval), groups: route.groups, quorum: route.quorum, voters: [] };
}

/** The route as the store writes it; an escalation is timed from now, and only if it comes before the expiry. */
function toRevisionRoute(route: Route, expiresAt: number, now: number): RevisionRoute {
  const escalateAt = route.escalation && now + route.escalation.afterMs;
  return {
    rule: route.rule,
    why: route.why,
    groups: route.groups,
    quorum: route.quorum,
    ...(route.escalation && escalateAt! < expiresAt
      ? { escalation: { at: escalateAt!, groups: route.escalation.groups } }
      : {}),
  };
}

/**
 * Whether a revision's route leaves the request where it is: the same quorum and the same groups (counting the route's
 * escalation groups when the request escalated already). Then nobody new decides, and the edit behaves as it always
 * did (the request keeps its groups, escalation and timers; only the rule and why that name the route are updated).
 */
export function keepsRoute(
  approval: Pick<StoredApproval, 'groups' | 'quorum'>,
  route: Pick<Route, 'groups' | 'quorum' | 'escalation'>,
): boolean {
  if (route.quorum !== approval.quorum) return false;
  const escalated = [...route.groups, ...(route.escalation?.groups ?? [])];
  return sameSet(route.groups, approval.groups) || sameSet(escalated, approval.groups);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const [x, y] = [new Set(a), new Set(b)];
  return x.size === y.size && [...x].every((item) => y.has(item));
}
