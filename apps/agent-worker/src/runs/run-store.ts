// All Redis I/O of runs: every transition is one Lua script over the run's hash (one key, one slot).
import { type ChatMessage, jobIds, type RunEvent } from '@countersign/contracts';
import type { CallState } from '@countersign/call-ledger';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import {
  callFields,
  runEventFields,
  runEventsChannel,
  runKey,
  unpublishedMember,
  unpublishedRequestsKey,
  type UnpublishedRequest,
} from './run-keys';
import {
  ErrorCode,
  OwnershipLostError,
  throwOnErrorCode,
  UnexpectedScriptReplyError,
} from './run-store.errors';
import {
  type CallResult,
  type FrontierCall,
  type Lease,
  type ManualNote,
  ownerOf,
  type ParkedCallBody,
  type RunRecord,
  type StoredDecision,
} from './run-state';
import { decodeRunEvent, encodeRunEvent, type NumberedRunEvent, RUN_EVENT_HISTORY } from './run-event-codec';

const SCRIPTS = {
  claimRun: LuaScript.load(__dirname, 'claim-run-1.lua'),
  applyDecision: LuaScript.load(__dirname, 'apply-decision-1.lua'),
  transitionCall: LuaScript.load(__dirname, 'transition-call-1.lua'),
  parkRun: LuaScript.load(__dirname, 'park-run-1.lua'),
  checkpointRun: LuaScript.load(__dirname, 'checkpoint-run-1.lua'),
  finishRun: LuaScript.load(__dirname, 'finish-run-1.lua'),
  startCall: LuaScript.load(__dirname, 'start-call-1.lua'),
  heartbeatCall: LuaScript.load(__dirname, 'heartbeat-call-1.lua'),
  completeCall: LuaScript.load(__dirname, 'record-call-result-1.lua'),
  settleExecutingCall: LuaScript.load(__dirname, 'settle-executing-call-1.lua'),
  appendEvents: LuaScript.load(__dirname, 'append-events-1.lua'),
  noteManualStep: LuaScript.load(__dirname, 'note-manual-step-1.lua'),
};

// The encoded argument of each script that takes one (ARGV[1], a JSON object): the names its header lists.
/** What a script that changes a run needs to add events to its history and publish them (includes/append-events). */
type HistoryArgs = { eventsChannel: string; runIdJson: string; keepEvents: number; events: string[] };
type ApplyDecisionArgs = {
  callId: string;
  requestId: string;
  attempt: number;
  fingerprint: string;
  decisionJson: string;
  jobId: string;
  lockToken: string;
  started: number;
} & HistoryArgs;
type TransitionCallArgs = {
  owner: string;
  callId: string;
  from: CallState;
  to: CallState;
  resultJson: string;
  bodyJson: string;
};
type CompleteCallArgs = { callId: string; executionToken: string; resultJson: string; owner: string };
type SettleExecutingCallArgs = { owner: string; callId: string; staleAfterMs: number; bodyJson: string };
type ParkRunArgs = {
  owner: string;
  messagesJson: string;
  parkedBy: string;
  scriptJson: string;
  frontier: string[];
};
type CheckpointRunArgs = { owner: string; messagesJson: string };
type FinishRunArgs = ({ owner: string; jobId?: never } | { jobId: string; owner?: never }) & {
  status: 'completed' | 'failed';
  messagesJson: string;
  result: string;
  error: string;
  keepForSeconds: number;
} & HistoryArgs;

/** `claimed` and `republish` carry the run as the claim left it (read in the same script). */
export type ClaimResult =
  | { kind: 'claimed'; run: RunRecord }
  | { kind: 'republish'; run: RunRecord }
  | { kind: 'skip' }
  | { kind: 'not_found' };

/** What the run's owner found on a call left `executing` by an earlier processing. */
export type ExecutingCallSettlement =
  | { kind: 'interrupted' }
  | { kind: 'done'; result: CallResult }
  | { kind: 'in_flight'; heartbeatAgeMs: number };

export type ApplyDecisionResult =
  | { kind: 'resume'; run: RunRecord }
  | { kind: 'takeover'; run: RunRecord }
  | { kind: 'republish'; run: RunRecord }
  | { kind: 'recorded' }
  | { kind: 'duplicate'; state: string }
  | { kind: 'run_not_found' }
  | { kind: 'call_not_in_frontier' }
  | { kind: 'stale_attempt'; pendingAttempt: number }
  | { kind: 'request_mismatch'; pendingRequestId: string }
  | { kind: 'fingerprint_mismatch'; parked: ParkedCallBody };

/** Fields a new run is created with. */
export interface NewRun {
  runId: string;
  agent: string;
  userId: string;
  submittedBy?: string;
  sessionId?: string;
  scopes: string[];
  script?: unknown[];
  messages: ChatMessage[];
}

/** A run with its event history, as one read found them. */
export interface RunWithHistory {
  run: RunRecord;
  /** False for a run stored without one (by an older version): only its state can be shown. */
  hasHistory: boolean;
  /** In order; the oldest may have been dropped (RUN_EVENT_HISTORY). */
  history: NumberedRunEvent[];
  /** The number of the newest event (0: none yet). */
  lastSeq: number;
}

export class RunStore {
  private readonly eventsChannel: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
    private readonly finishedRunTtlSeconds: number,
  ) {
    this.eventsChannel = runEventsChannel(keyPrefix);
  }

  private key(runId: string): string {
    return runKey(this.keyPrefix, runId);
  }

  async claimRun(run: NewRun, lease: Lease): Promise<ClaimResult> {
    // The history starts with the run (no event yet): a follower who reads the run before its first event is
    // stored then gets every event live, instead of a snapshot that the first events would repeat.
    const fields = { ...newRunFields(run), status: 'queued', [runEventFields.last]: '0' };
    const [code, hash] = (await SCRIPTS.claimRun.run(
      this.redis,
      [this.key(run.runId)],
      [lease.jobId, lease.token, JSON.stringify(fields), lease.started],
    )) as [number, string[]?];
    if (code === 1) return { kind: 'claimed', run: toRunRecord(run.runId, pairs(hash)) };
    if (code === 2) return { kind: 'republish', run: toRunRecord(run.runId, pairs(hash)) };
    if (code === 0) return { kind: 'skip' };
    if (code === -1) return { kind: 'not_found' };
    throw new UnexpectedScriptReplyError('claim-run', code);
  }

  /** `onResume`: events added to the run's history (and published) in the step that completes its frontier. */
  async applyDecision(
    runId: string,
    request: { callId: string; requestId: string; attempt: number },
    decision: StoredDecision,
    lease: Lease,
    onResume: RunEvent[] = [],
  ): Promise<ApplyDecisionResult> {
    const { callId, requestId, attempt } = request;
    const [code, detail, hash] = (await SCRIPTS.applyDecision.run(
      this.redis,
      [this.key(runId)],
      [
        encodeScriptArgs<ApplyDecisionArgs>({
          callId,
          requestId,
          attempt,
          fingerprint: decision.fingerprint,
          decisionJson: JSON.stringify(decision),
          jobId: lease.jobId,
          lockToken: lease.token,
          started: lease.started,
          ...this.historyArgs(runId, onResume),
        }),
      ],
    )) as [number, string, string[]?];
    switch (code) {
      case 2:
        return { kind: 'resume', run: toRunRecord(runId, pairs(hash)) };
      case 3:
        return { kind: 'takeover', run: toRunRecord(runId, pairs(hash)) };
      case 4:
        return { kind: 'republish', run: toRunRecord(runId, pairs(hash)) };
      case 1:
        return { kind: 'recorded' };
      case 0:
        return { kind: 'duplicate', state: detail };
      case -1:
        return { kind: 'run_not_found' };
      case -2:
        return { kind: 'call_not_in_frontier' };
      case -3:
        return { kind: 'stale_attempt', pendingAttempt: Number(detail) };
      case -4:
        return { kind: 'fingerprint_mismatch', parked: decodeBody(callId, detail) };
      case -8:
        return { kind: 'request_mismatch', pendingRequestId: detail };
      case ErrorCode.NotOwner:
        // A later processing of this job resumed the run: this one's lock lapsed before it got here.
        throw new OwnershipLostError(runId);
      default:
        throw new UnexpectedScriptReplyError('apply-decision', [code, detail]);
    }
  }

  /** Compare-and-set of a call's state by the run's owner; throws a typed error when it cannot. */
  async transitionCall(
    runId: string,
    lease: Lease,
    callId: string,
    from: Exclude<CallState, 'executing'>,
    to: Exclude<CallState, 'executing'>,
    change: { result?: CallResult; body?: ParkedCallBody } = {},
  ): Promise<void> {
    const reply = (await SCRIPTS.transitionCall.run(
      this.redis,
      [this.key(runId)],
      [
        encodeScriptArgs<TransitionCallArgs>({
          owner: ownerOf(lease),
          callId,
          from,
          to,
          resultJson: change.result ? JSON.stringify(change.result) : '',
          bodyJson: change.body ? encodeBody(change.body) : '',
        }),
      ],
    )) as number | [number, string];
    if (reply === 1) return;
    if (Array.isArray(reply)) throwOnErrorCode(reply[0], { runId, callId, expected: from, actual: reply[1] });
    throwOnErrorCode(reply as number, { runId, callId });
  }

  /** approved -> executing by the run's owner, under a fresh execution token; the first heartbeat is stamped now. */
  async startCall(runId: string, lease: Lease, callId: string, executionToken: string): Promise<void> {
    const reply = (await SCRIPTS.startCall.run(
      this.redis,
      [this.key(runId)],
      [ownerOf(lease), callId, executionToken],
    )) as number | [number, string];
    if (reply === 1) return;
    if (Array.isArray(reply))
      throwOnErrorCode(reply[0], { runId, callId, expected: 'approved', actual: reply[1] });
    throwOnErrorCode(reply as number, { runId, callId });
  }

  /** Renews an executing call's heartbeat; false when the call is no longer executing under this token. */
  async heartbeatCall(runId: string, callId: string, executionToken: string): Promise<boolean> {
    const reply = (await SCRIPTS.heartbeatCall.run(
      this.redis,
      [this.key(runId)],
      [callId, executionToken],
    )) as number;
    if (reply === 1) return true;
    if (reply === ErrorCode.ExecutionLost) return false;
    throw new UnexpectedScriptReplyError('heartbeat-call', reply);
  }

  /**
   * executing -> done with the result, by the call's executor (execution token), whoever owns the run now.
   * Returns whether the caller still owns the run; throws ExecutionLostError when the call was interrupted meanwhile.
   */
  async completeCall(
    runId: string,
    lease: Lease,
    callId: string,
    executionToken: string,
    result: CallResult,
  ): Promise<{ stillOwner: boolean }> {
    const [code, detail] = (await SCRIPTS.completeCall.run(
      this.redis,
      [this.key(runId)],
      [
        encodeScriptArgs<CompleteCallArgs>({
          callId,
          executionToken,
          resultJson: JSON.stringify(result),
          owner: ownerOf(lease),
        }),
      ],
    )) as [number, string];
    if (code === 1 || code === 2) return { stillOwner: code === 1 };
    throwOnErrorCode(code, { runId, callId, actual: detail });
    throw new UnexpectedScriptReplyError('record-call-result', [code, detail]);
  }

  /** The owner settles a call an earlier processing left `executing`: wait for a live executor, else re-ask. */
  async settleExecutingCall(
    runId: string,
    lease: Lease,
    callId: string,
    staleAfterMs: number,
    reasked: ParkedCallBody,
  ): Promise<ExecutingCallSettlement> {
    const [code, detail] = (await SCRIPTS.settleExecutingCall.run(
      this.redis,
      [this.key(runId)],
      [
        encodeScriptArgs<SettleExecutingCallArgs>({
          owner: ownerOf(lease),
          callId,
          staleAfterMs,
          bodyJson: encodeBody(reasked),
        }),
      ],
    )) as [number, string];
    switch (code) {
      case 1:
        return { kind: 'interrupted' };
      case 2:
        return { kind: 'done', result: JSON.parse(detail) as CallResult };
      case 0:
        return { kind: 'in_flight', heartbeatAgeMs: Number(detail) };
      default:
        throwOnErrorCode(code, { runId, callId, expected: 'executing', actual: detail });
        throw new UnexpectedScriptReplyError('settle-executing-call', [code, detail]);
    }
  }

  /** `script` (a scripted run's) is stored with the turns played so far blanked: only the rest is needed. */
  async parkRun(
    runId: string,
    lease: Lease,
    messages: ChatMessage[],
    frontier: FrontierCall[],
    script?: RunRecord['script'],
  ): Promise<void> {
    const reply = (await SCRIPTS.parkRun.run(
      this.redis,
      [this.key(runId)],
      [
        encodeScriptArgs<ParkRunArgs>({
          owner: ownerOf(lease),
          messagesJson: JSON.stringify(messages),
          // The run's own start job is '' (its ID follows from the run's): one value fewer in every parked run.
          parkedBy: lease.jobId === jobIds.startRun(runId) ? '' : lease.jobId,
          scriptJson: script ? JSON.stringify(unplayed(script, messages)) : '',
          frontier: frontier.flatMap((call) => frontierFields(call)),
        }),
      ],
    )) as number;
    if (reply !== 1) throwOnErrorCode(reply, { runId });
  }

  /**
   * A running run's conversation after a turn whose calls all finished, by its owner (throws OwnershipLostError
   * otherwise): a worker that takes the run over goes on from here. The frontier's calls are dropped (their results
   * are in `messages`); the same messages a park would store, so the run hash is no larger than parked.
   */
  async checkpointRun(runId: string, lease: Lease, messages: ChatMessage[]): Promise<void> {
    const reply = (await SCRIPTS.checkpointRun.run(
      this.redis,
      [this.key(runId)],
      [
        encodeScriptArgs<CheckpointRunArgs>({
          owner: ownerOf(lease),
          messagesJson: JSON.stringify(messages),
        }),
      ],
    )) as number;
    if (reply !== 1) throwOnErrorCode(reply, { runId });
  }

  /**
   * Ends the run, and adds `events` (its last ones) to its history in the same step. `{ jobId }` instead of a
   * lease ends it only if some processing of that job owns it (the job failed for good outside its processor);
   * false when it did not.
   */
  async finishRun(
    runId: string,
    lease: Lease | { jobId: string },
    end: { status: 'completed' | 'failed'; messages?: ChatMessage[]; result?: string; error?: string },
    events: RunEvent[] = [],
  ): Promise<boolean> {
    const reply = (await SCRIPTS.finishRun.run(
      this.redis,
      [this.key(runId)],
      [
        encodeScriptArgs<FinishRunArgs>({
          ...('token' in lease ? { owner: ownerOf(lease) } : { jobId: lease.jobId }),
          status: end.status,
          messagesJson: end.messages ? JSON.stringify(end.messages) : '',
          result: end.result ?? '',
          error: end.error ?? '',
          keepForSeconds: this.finishedRunTtlSeconds,
          ...this.historyArgs(runId, events),
        }),
      ],
    )) as number;
    if (reply === 1) return true;
    if (reply === 0) return false;
    if (reply === ErrorCode.NotOwner && !('token' in lease)) return false;
    throwOnErrorCode(reply, { runId });
    return false;
  }

  /**
   * Adds events to the run's history and publishes them (fire and forget for the caller: the run's state is the
   * truth). Returns the number of the first, or 0 when the run does not exist (nothing is stored or published).
   */
  async appendEvents(runId: string, events: RunEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    return (await SCRIPTS.appendEvents.run(
      this.redis,
      [this.key(runId)],
      this.eventArgs(runId, events),
    )) as number;
  }

  /** ARGV of the history include: channel, run ID, bound, encoded events. */
  private eventArgs(runId: string, events: RunEvent[]): (string | number)[] {
    if (events.length === 0) return [];
    const { eventsChannel, runIdJson, keepEvents, events: encoded } = this.historyArgs(runId, events);
    return [eventsChannel, runIdJson, keepEvents, ...encoded];
  }

  /** The same, as the fields of a script's JSON argument (apply-decision, finish-run). */
  private historyArgs(runId: string, events: RunEvent[]): HistoryArgs {
    return {
      eventsChannel: this.eventsChannel,
      runIdJson: JSON.stringify(runId),
      keepEvents: RUN_EVENT_HISTORY,
      events: events.map(encodeRunEvent),
    };
  }

  /** The run and its event history in one read, or undefined when the run does not exist. */
  async loadWithHistory(runId: string): Promise<RunWithHistory | undefined> {
    const hash = await this.redis.hgetall(this.key(runId));
    if (!hash.status) return undefined;
    const history: NumberedRunEvent[] = [];
    for (const [field, value] of Object.entries(hash)) {
      const seq = runEventFields.seqOf(field);
      const event = seq === undefined ? undefined : decodeRunEvent(runId, value);
      // An entry that does not decode is left out: the history is a view, the run's state is the truth.
      if (seq !== undefined && event) history.push({ seq, event });
    }
    return {
      run: toRunRecord(runId, hash),
      hasHistory: hash[runEventFields.last] !== undefined,
      history: history.sort((a, b) => a.seq - b.seq),
      lastSeq: Number(hash[runEventFields.last] ?? 0),
    };
  }

  /** The whole run in one round trip, or undefined when it does not exist. */
  async load(runId: string): Promise<RunRecord | undefined> {
    const hash = await this.redis.hgetall(this.key(runId));
    if (!hash.status) return undefined;
    return toRunRecord(runId, hash);
  }

  /**
   * Notes that these calls' requests are not on the queue yet, before the run parks on them: if the parking job dies
   * (or its publish fails) before markPublished, the request sweep finds them here (see RequestSweep). A plain ZADD of
   * its own, not part of the park script: the index is one key for every run, and a script may touch one slot only.
   */
  async markUnpublished(requests: UnpublishedRequest[], now = Date.now()): Promise<void> {
    if (requests.length === 0) return;
    const entries = requests.flatMap((request) => [now, unpublishedMember(request)]);
    await this.redis.zadd(unpublishedRequestsKey(this.keyPrefix), 'NX', ...entries);
  }

  /** The requests are on the queue: the sweep has nothing left to do for them (nothing stays at rest). */
  async markPublished(requests: UnpublishedRequest[]): Promise<void> {
    if (requests.length === 0) return;
    await this.redis.zrem(unpublishedRequestsKey(this.keyPrefix), ...requests.map(unpublishedMember));
  }

  /** Up to `limit` unpublished requests noted before `before` (ms), oldest first, skipping the first `offset`. */
  async unpublishedBefore(before: number, limit: number, offset = 0): Promise<string[]> {
    return this.redis.zrangebyscore(
      unpublishedRequestsKey(this.keyPrefix),
      '-inf',
      before,
      'LIMIT',
      offset,
      limit,
    );
  }

  /** How many requests were noted before `before` (ms) and are still not confirmed on the queue. */
  countUnpublishedBefore(before: number): Promise<number> {
    return this.redis.zcount(unpublishedRequestsKey(this.keyPrefix), '-inf', before);
  }

  /** Drops index entries by their member text (ones the sweep found stale or unreadable). */
  async dropUnpublished(members: string[]): Promise<void> {
    if (members.length === 0) return;
    await this.redis.zrem(unpublishedRequestsKey(this.keyPrefix), ...members);
  }

  /**
   * Throws OwnershipLostError unless this processing still owns the run. A plain read: it fences what this
   * processing is about to do (a model turn, auto calls) against a takeover that already happened. Returns the run's
   * manual-step notes, read in the same step (a note may arrive while the run is running).
   */
  async assertOwner(runId: string, lease: Lease): Promise<ManualNote[]> {
    const [owner, notes] = await this.redis.hmget(this.key(runId), 'owner', 'notes');
    if (owner !== ownerOf(lease)) throw new OwnershipLostError(runId);
    return parseNotes(notes);
  }

  /**
   * Keeps a note that a person did a call's manual step, for the model's next turn, and adds `event` to the run's
   * history; once per request ID. `noted`: stored now; `again`: stored before; `no_run`: the run is gone. `status` is
   * the run's.
   */
  async noteManualStep(
    runId: string,
    note: ManualNote,
    event: RunEvent,
  ): Promise<{ kind: 'noted' | 'again'; status: string } | { kind: 'no_run' }> {
    const [code, status] = (await SCRIPTS.noteManualStep.run(
      this.redis,
      [this.key(runId)],
      [note.requestId, JSON.stringify(note), ...this.eventArgs(runId, [event])],
    )) as [number, string?];
    if (code === 0) return { kind: 'no_run' };
    return { kind: code === 1 ? 'noted' : 'again', status: String(status) };
  }
}

/** A flat HGETALL reply from a script ([field, value, ...]) as an object. */
function pairs(flat: string[] | undefined): Record<string, string> {
  const hash: Record<string, string> = {};
  if (flat) for (let i = 0; i < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
  return hash;
}

/** The run hash: header fields, and the frontier's call fields (`c:<callId>...`, see callFields). */
function toRunRecord(runId: string, hash: Record<string, string>): RunRecord {
  return {
    runId,
    agent: hash.agent,
    userId: hash.userId,
    submittedBy: hash.submittedBy || undefined,
    sessionId: hash.sessionId || undefined,
    scopes: hash.scopes ? (JSON.parse(hash.scopes) as string[]) : [],
    status: hash.status as RunRecord['status'],
    messages: hash.messages ? (JSON.parse(hash.messages) as ChatMessage[]) : [],
    script: hash.script ? (JSON.parse(hash.script) as RunRecord['script']) : undefined,
    result: hash.result || undefined,
    error: hash.error || undefined,
    frontier: parseFrontier(hash),
    notes: parseNotes(hash.notes),
  };
}

function parseNotes(json: string | null | undefined): ManualNote[] {
  if (!json) return [];
  try {
    const notes = JSON.parse(json) as unknown;
    return Array.isArray(notes)
      ? notes.filter(
          (n): n is ManualNote =>
            typeof (n as ManualNote)?.requestId === 'string' &&
            typeof (n as ManualNote)?.callId === 'string' &&
            typeof (n as ManualNote)?.text === 'string',
        )
      : [];
  } catch {
    return [];
  }
}

/**
 * A scripted run's script with the turns already played (one per assistant message) blanked, so a parked
 * run keeps only what is left to play; the scripted model indexes turns by counting assistant messages.
 */
function unplayed(script: NonNullable<RunRecord['script']>, messages: ChatMessage[]): RunRecord['script'] {
  const played = messages.filter((m) => m.role === 'assistant').length;
  return script.map((turn, i) => (i < played ? null : turn));
}

/** Only what a run needs to go on: a parked run is at rest in Redis, possibly 100,000s of them. */
function newRunFields(run: NewRun): Record<string, string> {
  const fields: Record<string, string> = {
    agent: run.agent,
    userId: run.userId,
    messages: JSON.stringify(run.messages),
  };
  if (run.scopes.length > 0) fields.scopes = JSON.stringify(run.scopes);
  if (run.submittedBy) fields.submittedBy = run.submittedBy;
  if (run.sessionId) fields.sessionId = run.sessionId;
  if (run.script) fields.script = JSON.stringify(run.script);
  return fields;
}

function frontierFields(call: FrontierCall): string[] {
  const id = call.body.id;
  const fields = [callFields.body(id), encodeBody(call.body), callFields.state(id), call.state];
  if (call.decision) fields.push(callFields.decision(id), JSON.stringify(call.decision));
  if (call.result) fields.push(callFields.result(id), JSON.stringify(call.result));
  return fields;
}

/**
 * A parked call as stored: without its ID (the field name is the ID) and without what most parked calls share, which
 * the Lua scripts and decodeBody read as defaults: the first request's attempt (0) and reason (confirmation_required),
 * the tier of a call that waits (confirm) and the first position in its turn (0). A parked run is at rest by the
 * 100,000s: these keep its hash in a smaller allocation.
 */
export function encodeBody(body: ParkedCallBody): string {
  const { id: _id, attempt, reason, tier, i, ...rest } = body;
  return JSON.stringify({
    ...rest,
    ...(tier !== 'confirm' ? { tier } : {}),
    ...(i !== 0 ? { i } : {}),
    ...(attempt !== 0 ? { attempt } : {}),
    ...(reason !== 'confirmation_required' ? { reason } : {}),
  });
}

type StoredBody = Omit<ParkedCallBody, 'id' | 'attempt' | 'reason' | 'tier' | 'i'> &
  Partial<Pick<ParkedCallBody, 'attempt' | 'reason' | 'tier' | 'i'>>;

export function decodeBody(id: string, json: string): ParkedCallBody {
  const stored = JSON.parse(json) as StoredBody;
  return {
    ...stored,
    tier: stored.tier ?? 'confirm',
    i: stored.i ?? 0,
    attempt: stored.attempt ?? 0,
    reason: stored.reason ?? 'confirmation_required',
    id,
  };
}

function parseFrontier(hash: Record<string, string>): FrontierCall[] {
  const calls: FrontierCall[] = [];
  for (const [field, value] of Object.entries(hash)) {
    const id = callFields.idOfBody(field);
    if (id === undefined) continue;
    const decision = hash[callFields.decision(id)];
    const result = hash[callFields.result(id)];
    calls.push({
      body: decodeBody(id, value),
      state: hash[callFields.state(id)] as CallState,
      decision: decision ? (JSON.parse(decision) as StoredDecision) : undefined,
      result: result ? (JSON.parse(result) as CallResult) : undefined,
    });
  }
  return calls.sort((a, b) => a.body.i - b.body.i);
}
