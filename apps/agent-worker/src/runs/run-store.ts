// All Redis I/O of a run as a whole: claim, decide, park, checkpoint, finish, its events and notes. Every change is
// one Lua script over the run's hash (one key, one slot); its calls' own moves are RunCalls', the stored form
// run-state-codec.ts's.
import { type ChatMessage, jobIds, type RunEvent } from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import { runEventFields, runEventsChannel, runKey } from './run-keys';
import {
  ErrorCode,
  OwnershipLostError,
  throwOnErrorCode,
  UnexpectedScriptReplyError,
} from './run-store.errors';
import type { FrontierCall, Lease, ManualNote, ParkedCallBody, RunRecord, StoredDecision } from './run-state';
import {
  decodeBody,
  frontierFields,
  type NewRun,
  newRunFields,
  ownerOf,
  pairs,
  parseNotes,
  toRunRecord,
  unplayed,
} from './run-state-codec';
import {
  decodeRunEvent,
  encodeRunEvent,
  type HistoryArgs,
  historyArgs,
  type NumberedRunEvent,
} from './run-event-codec';

export type { NewRun } from './run-state-codec';

/** A run event, and the marker under which its run's history gets it at most once (none: always). */
export interface MarkedRunEvent {
  event: RunEvent;
  once?: string;
}

const SCRIPTS = {
  claimRun: LuaScript.load(__dirname, 'claim-run-1.lua'),
  applyDecision: LuaScript.load(__dirname, 'apply-decision-1.lua'),
  parkRun: LuaScript.load(__dirname, 'park-run-1.lua'),
  checkpointRun: LuaScript.load(__dirname, 'checkpoint-run-1.lua'),
  finishRun: LuaScript.load(__dirname, 'finish-run-1.lua'),
  appendEvents: LuaScript.load(__dirname, 'append-events-1.lua'),
  appendEventsOnce: LuaScript.load(__dirname, 'append-events-once-1.lua'),
  noteManualStep: LuaScript.load(__dirname, 'note-manual-step-1.lua'),
};

// The encoded argument of each script that takes one (ARGV[1], a JSON object): the names its header lists.
type ApplyDecisionArgs = {
  callId: string;
  requestId: string;
  attempt: number;
  fingerprint: string;
  decisionJson: string;
  jobId: string;
  lockToken: string;
  started: number;
  /** The decision's event (encoded), added when the decision is recorded (codes 1 and 2); '' = none. */
  decided: string;
} & HistoryArgs;
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

  /** `onClaim`: events added to the run's history (and published) in the step that claims it, not otherwise. */
  async claimRun(run: NewRun, lease: Lease, onClaim: RunEvent[] = []): Promise<ClaimResult> {
    // The history starts with the run (no event yet): a follower who reads the run before its first event is
    // stored then gets every event live, instead of a snapshot that the first events would repeat.
    const fields = { ...newRunFields(run), status: 'queued', [runEventFields.last]: '0' };
    const [code, hash] = (await SCRIPTS.claimRun.run(
      this.redis,
      [this.key(run.runId)],
      [
        lease.jobId,
        lease.token,
        JSON.stringify(fields),
        lease.started,
        ...this.eventArgs(run.runId, onClaim),
      ],
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
    decided?: RunEvent,
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
          decided: decided ? encodeRunEvent(decided) : '',
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
          frontier: frontier.flatMap(frontierFields),
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

  /**
   * The same for events of which some are added at most once: each under its `once` marker is skipped (neither stored
   * nor published) when one under that marker was added before. One script call, in order. Returns the number of the
   * first added, 0 when the run does not exist, -1 when every event was added before.
   */
  async appendEventsOnce(runId: string, events: readonly MarkedRunEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const [channel, runIdJson, keep, ...encoded] = this.eventArgs(
      runId,
      events.map((e) => e.event),
    );
    return (await SCRIPTS.appendEventsOnce.run(
      this.redis,
      [this.key(runId)],
      [
        channel,
        runIdJson,
        keep,
        ...events.flatMap((e, i) => [
          e.once === undefined ? '' : runEventFields.sentOnce(e.once),
          encoded[i],
        ]),
      ],
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
    return historyArgs(this.eventsChannel, runId, events);
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
