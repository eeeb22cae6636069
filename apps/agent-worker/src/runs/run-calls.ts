// The calls of a run on the call ledger (libs/call-ledger): claim, heartbeat, record the result of, settle an executing
// call, and compare-and-set the others. Each is one Lua script over the run's hash that checks what is the run's own
// (who owns the run) and moves the call with the ledger's functions, in one atomic step.
import type { CallState } from '@countersign/call-ledger';
import type { RunEvent } from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import { type HistoryArgs, historyArgs } from './run-event-codec';
import { runEventsChannel, runKey } from './run-keys';
import { encodeBody, ownerOf } from './run-state-codec';
import type { CallResult, Lease, ParkedCallBody } from './run-state';
import { ErrorCode, throwOnErrorCode, UnexpectedScriptReplyError } from './run-store.errors';

const SCRIPTS = {
  startCall: LuaScript.load(__dirname, 'start-call-1.lua'),
  heartbeatCall: LuaScript.load(__dirname, 'heartbeat-call-1.lua'),
  recordCallResult: LuaScript.load(__dirname, 'record-call-result-1.lua'),
  settleExecutingCall: LuaScript.load(__dirname, 'settle-executing-call-1.lua'),
  transitionCall: LuaScript.load(__dirname, 'transition-call-1.lua'),
};

// The encoded argument of each script that takes one (ARGV[1], a JSON object): the names its header lists.
type TransitionCallArgs = {
  owner: string;
  callId: string;
  from: CallState;
  to: CallState;
  resultJson: string;
  bodyJson: string;
};
type RecordCallResultArgs = {
  callId: string;
  executionToken: string;
  resultJson: string;
  owner: string;
} & Omit<HistoryArgs, 'events'>;
type SettleExecutingCallArgs = { owner: string; callId: string; staleAfterMs: number; bodyJson: string };

/** What the run's owner found on a call left `executing` by an earlier processing. */
export type ExecutingCallSettlement =
  | { kind: 'interrupted' }
  | { kind: 'done'; result: CallResult }
  | { kind: 'in_flight'; heartbeatAgeMs: number };

/** A call state a compare-and-set may name: `executing` is entered and left only with the execution token. */
type SettableState = Exclude<CallState, 'executing'>;

export class RunCalls {
  private readonly eventsChannel: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {
    this.eventsChannel = runEventsChannel(keyPrefix);
  }

  /** approved -> executing by the run's owner, under a fresh execution token; the first heartbeat is stamped now. */
  async startCall(runId: string, lease: Lease, callId: string, executionToken: string): Promise<void> {
    const reply = (await SCRIPTS.startCall.run(
      this.redis,
      [runKey(this.keyPrefix, runId)],
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
      [runKey(this.keyPrefix, runId)],
      [callId, executionToken],
    )) as number;
    if (reply === 1) return true;
    if (reply === ErrorCode.ExecutionLost) return false;
    throw new UnexpectedScriptReplyError('heartbeat-call', reply);
  }

  /**
   * executing -> done with the result, by the call's executor (execution token), whoever owns the run now; `events`
   * (the call's result, for the run's followers) are added to the run's history in the same step, once it is recorded.
   * Returns whether the caller still owns the run; throws ExecutionLostError when the call was interrupted meanwhile.
   */
  async completeCall(
    runId: string,
    lease: Lease,
    callId: string,
    executionToken: string,
    result: CallResult,
    events: RunEvent[] = [],
  ): Promise<{ stillOwner: boolean }> {
    // The encoded events go as arguments of their own: inside the JSON argument they would be escaped a second time.
    const { events: encoded, ...history } = historyArgs(this.eventsChannel, runId, events);
    const args = encodeScriptArgs<RecordCallResultArgs>({
      callId,
      executionToken,
      resultJson: JSON.stringify(result),
      owner: ownerOf(lease),
      ...history,
    });
    const [code, detail] = (await SCRIPTS.recordCallResult.run(
      this.redis,
      [runKey(this.keyPrefix, runId)],
      [args, ...encoded],
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
    const args = encodeScriptArgs<SettleExecutingCallArgs>({
      owner: ownerOf(lease),
      callId,
      staleAfterMs,
      bodyJson: encodeBody(reasked),
    });
    const [code, detail] = (await SCRIPTS.settleExecutingCall.run(
      this.redis,
      [runKey(this.keyPrefix, runId)],
      [args],
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

  /** Compare-and-set of a call's state by the run's owner; throws a typed error when it cannot. */
  async transitionCall(
    runId: string,
    lease: Lease,
    callId: string,
    from: SettableState,
    to: SettableState,
    change: { result?: CallResult; body?: ParkedCallBody } = {},
  ): Promise<void> {
    const args = encodeScriptArgs<TransitionCallArgs>({
      owner: ownerOf(lease),
      callId,
      from,
      to,
      resultJson: change.result ? JSON.stringify(change.result) : '',
      bodyJson: change.body ? encodeBody(change.body) : '',
    });
    const reply = (await SCRIPTS.transitionCall.run(this.redis, [runKey(this.keyPrefix, runId)], [args])) as
      number | [number, string];
    if (reply === 1) return;
    if (Array.isArray(reply)) throwOnErrorCode(reply[0], { runId, callId, expected: from, actual: reply[1] });
    throwOnErrorCode(reply as number, { runId, callId });
  }
}
