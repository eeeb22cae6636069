// Runs as HTTP sees them: start one (through the agent-runs queue), read it, follow its events.
import { randomUUID } from 'node:crypto';
import { BadRequestException, NotFoundException, type MessageEvent } from '@nestjs/common';
import { concat, EMPTY, filter, finalize, from, map, type Observable, takeWhile } from 'rxjs';
import { RunEventName, type RunEvent, type RunView, type StartRunBody } from '@countersign/contracts';
import type { AgentCatalog } from '../agents/agent-catalog';
import type { RunsProducer } from '../queues/producers';
import { isWaiting, toPendingCall } from './frontier';
import type { RunEvents } from './run-events';
import type { RunRecord } from './run-state';
import type { RunStore } from './run-store';
import { toNewRun } from './run-loop';

export class RunsService {
  constructor(
    private readonly store: RunStore,
    private readonly catalog: AgentCatalog,
    private readonly producer: RunsProducer,
    private readonly events: RunEvents,
  ) {}

  async start(body: StartRunBody): Promise<{ runId: string }> {
    const agent = this.catalog.get(body.agent);
    if (!agent)
      badField('agent', `unknown agent "${body.agent}" (known: ${this.catalog.names().join(', ')})`);
    if (agent.unavailable) badField('agent', `agent "${body.agent}" cannot run: ${agent.unavailable}`);
    if (body.script && agent.model?.provider !== 'scripted')
      badField('script', `agent "${body.agent}" does not use the scripted model`);

    // Only the start job is written here: the worker that claims it creates the run's hash (claim-run), and
    // until then the run is read from the job (load below). One write, and nothing a claim could race with.
    const job = { ...body, runId: `run-${randomUUID()}`, scopes: [] };
    await this.producer.startRun(job);
    return { runId: job.runId };
  }

  async view(runId: string): Promise<RunView> {
    const run = await this.load(runId);
    if (!run) throw new NotFoundException(`run "${runId}" does not exist`);
    return toView(run);
  }

  /** The run as stored, or, before any worker claimed it, as its start job says (queued, or failed for good). */
  private async load(runId: string): Promise<RunRecord | undefined> {
    const stored = await this.store.load(runId);
    if (stored) return stored;
    return (await this.fromStartJob(runId)) ?? this.store.load(runId); // claimed and its job gone meanwhile
  }

  /** A run no worker has created yet, as its start job says (queued, or failed for good). */
  private async fromStartJob(runId: string): Promise<RunRecord | undefined> {
    const start = await this.producer.findStart(runId);
    if (!start) return undefined;
    const { script: _script, ...run } = toNewRun(start.job);
    return {
      ...run,
      status: start.failedReason ? 'failed' : 'queued',
      ...(start.failedReason ? { error: start.failedReason } : {}),
      frontier: [],
    };
  }

  /**
   * The run's events after `after` (the client's Last-Event-ID; 0 for all): first its history, each with its
   * number as the SSE `id:`, then live events until `done`. The live subscription starts before the history is
   * read, and live events the history already had are dropped by number: no gap, no duplicate. A run without a
   * history (queued, not yet claimed; or stored by an older version) starts with a snapshot of its state instead.
   */
  async follow(runId: string, after = 0): Promise<Observable<MessageEvent>> {
    const live = this.events.forRun(runId);
    let start: { replay: MessageEvent[]; last: number; finished: boolean };
    try {
      start = await this.startOfStream(runId, after);
    } catch (error) {
      live.close();
      throw error;
    }
    const { replay, last, finished } = start;
    const rest = live.events.pipe(
      filter((e) => e.seq > last),
      map((e) => toMessage(e.event, e.seq)),
    );
    return concat(from(replay), finished ? EMPTY : rest).pipe(
      takeWhile((m) => m.type !== RunEventName.Done, true),
      finalize(() => live.close()),
    );
  }

  private async startOfStream(
    runId: string,
    after: number,
  ): Promise<{ replay: MessageEvent[]; last: number; finished: boolean }> {
    let stored = await this.store.loadWithHistory(runId);
    const queued = stored ? undefined : await this.fromStartJob(runId);
    if (!stored && !queued) stored = await this.store.loadWithHistory(runId); // claimed and its job gone meanwhile
    if (stored?.hasHistory) {
      const replay = stored.history.filter((e) => e.seq > after).map((e) => toMessage(e.event, e.seq));
      const last = Math.max(after, stored.lastSeq);
      // A finished run's history ends with `done` (finish-run stores them together): then nothing follows.
      if (stored.history.some((e) => e.event.type === RunEventName.Done))
        return { replay, last, finished: true };
      // Finished without one in its history (ended by an older version): its state says how it ended.
      const done = doneEvent(stored.run);
      return done
        ? { replay: [...replay, toMessage(done)], last, finished: true }
        : { replay, last, finished: false };
    }
    // Its events come live from its first one (claim-run creates the history with the run).
    const run = stored?.run ?? queued;
    if (!run) throw new NotFoundException(`run "${runId}" does not exist`);
    const snapshot = snapshotEvents(run).map((e) => toMessage(e));
    return { replay: snapshot, last: after, finished: snapshot.some((m) => m.type === RunEventName.Done) };
  }
}

function toMessage(event: RunEvent, seq?: number): MessageEvent {
  return { type: event.type, data: event, ...(seq !== undefined ? { id: String(seq) } : {}) };
}

function badField(field: string, message: string): never {
  throw new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    message: `${field}: ${message}`,
    issues: [{ path: field, message }],
  });
}

export function toView(run: RunRecord): RunView {
  return {
    runId: run.runId,
    agent: run.agent,
    userId: run.userId,
    status: run.status,
    pending: run.frontier.filter(isWaiting).map((c) => toPendingCall(c.body)),
    messages: run.messages,
    ...(run.result !== undefined ? { result: run.result } : {}),
    ...(run.error !== undefined ? { error: run.error } : {}),
  };
}

function snapshotEvents(run: RunRecord): RunEvent[] {
  const events: RunEvent[] = [{ type: RunEventName.Status, runId: run.runId, status: run.status }];
  for (const call of run.frontier.filter(isWaiting)) {
    events.push({ type: RunEventName.ToolConfirmation, runId: run.runId, call: toPendingCall(call.body) });
  }
  const done = doneEvent(run);
  if (done) events.push(done);
  return events;
}

function doneEvent(run: RunRecord): RunEvent | undefined {
  if (run.status !== 'completed' && run.status !== 'failed') return undefined;
  return { type: RunEventName.Done, runId: run.runId, status: run.status, result: run.result };
}
