// Requests as the channels show them (the REST API and the CLI through it, the inbox, Slack, the email link): one
// request, a page of a list, what a path names, what was decided lately, each with what its tool does. The channels read
// this, never a store; who may see what they read is the votes' rule (maySee in votes/deciders.ts), which they pass in.
import { Injectable } from '@nestjs/common';
import type { ApprovalStatus } from '@countersign/contracts';
import { DecidedCallResults, ToolCatalog } from '@countersign/shared-records';
import type { ApprovalPage, ListOptions, StoredApproval } from './approval-types';
import { RecentRequests } from './recent-requests';
import { RequestStore } from './request-store';

/**
 * What an ID in a path (`/approvals/:id`) names: the request with that request ID; else, read as a call ID, the one
 * request it names (see resolve); `ambiguous` when it names requests of several runs (`requestIds`: those the caller
 * may see, to choose from).
 */
export type Resolution =
  | { status: 'found'; approval: StoredApproval }
  | { status: 'not_found' }
  | { status: 'ambiguous'; requestIds: string[] };

/** A settled request for the history view, with what became of its call (when the worker reported it). */
export interface HistoryEntry {
  approval: StoredApproval;
  result?: { outcome: string; content: string; editedArgs?: Record<string, unknown>; at: string };
}

/** Which requests a caller may see (votes/deciders.ts maySee, bound to the caller). */
export type Visible = (approval: StoredApproval) => boolean;

@Injectable()
export class ApprovalReadModel {
  constructor(
    private readonly store: RequestStore,
    private readonly tools: ToolCatalog,
    private readonly results: DecidedCallResults,
    private readonly recent: RecentRequests,
  ) {}

  /** The request as stored now (kept as this process's recent copy: see RecentRequests). */
  async get(requestId: string): Promise<StoredApproval | undefined> {
    return this.remembered(await this.store.get(requestId));
  }

  /** One page of the approval lists (see RequestStore.list). */
  list(options: ListOptions): Promise<ApprovalPage> {
    return this.store.list(options);
  }

  /** The newest entries of one list (see RequestStore.newest). */
  newest(status: ApprovalStatus, count: number): Promise<StoredApproval[]> {
    return this.store.newest(status, count);
  }

  count(status: ApprovalStatus): Promise<number> {
    return this.store.count(status);
  }

  /** Every stored request that carries this call ID (see RequestStore.requestsOfCall). */
  requestsOfCall(callId: string): Promise<StoredApproval[]> {
    return this.store.requestsOfCall(callId);
  }

  /**
   * The request `id` names. A request ID names its request. Otherwise `id` is read as a call ID, which names a request
   * only when that is unambiguous: the requests carrying it all come from one run (its re-asks, or a later turn that
   * reused the ID: the newest is the one its run waits for), or exactly one of them is still open. Requests the caller
   * may not see (`visible`) are left out first; when none is visible, the one request the call ID names is still
   * returned, so a vote on it is refused (and audited, as a 404 like an unknown one), and a call ID that names
   * none of them is unknown to such a caller (no ambiguity is revealed).
   */
  async resolve(id: string, visible: Visible): Promise<Resolution> {
    const byRequestId = await this.get(id);
    if (byRequestId) return { status: 'found', approval: byRequestId };
    const carrying = await this.store.requestsOfCall(id);
    const seen = carrying.filter(visible);
    const named = namedBy(seen.length > 0 ? seen : carrying);
    if (named) return { status: 'found', approval: named };
    if (seen.length === 0) return { status: 'not_found' };
    return { status: 'ambiguous', requestIds: seen.map((a) => a.request.requestId) };
  }

  private remembered(approval: StoredApproval | undefined): StoredApproval | undefined {
    if (approval) this.recent.remember(approval);
    return approval;
  }

  /** Fills in what each request's tool does, from the tool catalog (one read for all of them). */
  async describe<T extends StoredApproval | undefined>(approvals: T[]): Promise<T[]> {
    const hashes = approvals.flatMap((a) => (a ? [a.request.toolDefinitionHash] : []));
    if (hashes.length === 0) return approvals;
    const tools = await this.tools.get(hashes);
    for (const a of approvals) if (a) a.tool = tools.get(a.request.toolDefinitionHash);
    return approvals;
  }

  /**
   * Recently settled requests the caller may see, newest first, with what became of each call (the worker reports it
   * when it settles the call).
   */
  async history(visible: Visible, limit = 50): Promise<HistoryEntry[]> {
    const recent = (await this.store.recent(limit * 4)).filter(visible);
    const shown = await this.describe(recent.slice(0, limit));
    const results = await this.results.read(shown.map((a) => a.request.requestId));
    return shown.map((approval) => ({ approval, result: results.get(approval.request.requestId) }));
  }
}

/** The one request a call ID names among `requests` (see ApprovalReadModel.resolve), or undefined. */
function namedBy(requests: StoredApproval[]): StoredApproval | undefined {
  if (requests.length === 0) return undefined;
  if (new Set(requests.map((a) => a.request.runId)).size === 1)
    return requests.reduce((newest, a) => (a.createdAt > newest.createdAt ? a : newest));
  const open = requests.filter((a) => a.status === 'pending' || a.status === 'notice');
  return open.length === 1 ? open[0] : undefined;
}

/** A call ID in a path that names requests of several runs: the caller must name the request by its request ID. */
export class AmbiguousCallIdError extends Error {
  constructor(
    readonly callId: string,
    /** The requests the caller may see, to choose from. */
    readonly requestIds: string[],
  ) {
    const choices = requestIds.length > 0 ? `: ${requestIds.join(', ')}` : '';
    super(
      `call ID ${callId} is used by requests of several runs; name the request by its request ID${choices}`,
    );
    this.name = this.constructor.name;
  }
}
