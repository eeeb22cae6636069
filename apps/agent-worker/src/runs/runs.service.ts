// Runs as HTTP sees them: start one (through the agent-runs queue), read it, follow its events.
import { randomUUID } from 'node:crypto';
import {
  BadRequestException,
  ForbiddenException,
  Inject,
  Injectable,
  NotFoundException,
  type MessageEvent,
} from '@nestjs/common';
import { concat, EMPTY, filter, finalize, from, map, type Observable, takeWhile } from 'rxjs';
import { isSettled } from '@countersign/call-ledger';
import {
  RUNBOOK_AGENT_PREFIX,
  type RunbookDefinition,
  RunEventName,
  type RunEvent,
  type RunView,
  type StartRunBody,
} from '@countersign/contracts';
import { hasRole, mayActFor, type Principal } from '@countersign/platform';
import { AuditLog } from '@countersign/audit';
import { RunReaders } from '@countersign/shared-records';
import { AgentCatalog } from '../agents/agent-catalog';
import { RunbookLibrary } from '../runbooks/runbook-library';
import { readRunbook } from '../runbooks/runbook-model';
import { isWaiting, toolMessages, toPendingCall } from './frontier';
import { RunEvents } from './run-events';
import { toNewRun } from './run-loop';
import { RunsProducer } from './run-producers';
import type { RunRecord } from './run-state';
import { RunStore } from './run-store';

@Injectable()
export class RunsService {
  constructor(
    @Inject(RunStore) private readonly store: Pick<RunStore, 'load' | 'loadWithHistory'>,
    @Inject(AgentCatalog) private readonly catalog: Pick<AgentCatalog, 'get' | 'names'>,
    @Inject(RunbookLibrary) private readonly runbooks: Pick<RunbookLibrary, 'get'>,
    @Inject(RunsProducer) private readonly producer: Pick<RunsProducer, 'startRun' | 'findStart'>,
    @Inject(RunEvents) private readonly events: Pick<RunEvents, 'forRun'>,
    @Inject(AuditLog) private readonly audit: Pick<AuditLog, 'append'>,
    @Inject(RunReaders) private readonly readers: Pick<RunReaders, 'includes'>,
  ) {}

  async start(body: StartRunBody, caller: Principal): Promise<{ runId: string }> {
    const agent = this.catalog.get(body.agent);
    if (!agent)
      badField('agent', `unknown agent "${body.agent}" (known: ${this.catalog.names().join(', ')})`);
    if (agent.unavailable) badField('agent', `agent "${body.agent}" cannot run: ${agent.unavailable}`);
    if (body.script && agent.model?.provider !== 'scripted')
      badField('script', `agent "${body.agent}" does not use the scripted model`);

    const { onBehalfOf, userId: _refused, ...request } = body;
    const userId = onBehalfOf ?? caller.id;
    if (!mayActFor(caller, userId))
      throw new ForbiddenException(
        `onBehalfOf: "${caller.id}" may not start runs for "${userId}" (it needs an actAs entry in PRINCIPALS_CONFIG)`,
      );

    // Only the start job is written here: the worker that claims it creates the run's hash (claim-run), and
    // until then the run is read from the job (load below). One write, and nothing a claim could race with.
    const job = {
      ...request,
      runId: `run-${randomUUID()}`,
      userId,
      ...(userId !== caller.id ? { submittedBy: caller.id } : {}),
      scopes: [],
    };
    if (job.submittedBy)
      // A client acting for a user: the audit names both before the run can do anything.
      await this.audit.append({
        type: 'run.started',
        runId: job.runId,
        actor: caller.id,
        detail: { agent: job.agent, onBehalfOf: userId },
      });
    await this.producer.startRun(job);
    return { runId: job.runId };
  }

  async view(runId: string, caller: Principal): Promise<RunView> {
    const run = await this.readable(runId, caller);
    const view = toView(run);
    const definition = runbookOf(run.agent, this.runbooks);
    if (!definition) return view;
    // A parked turn's finished calls are checkpointed in the frontier, not yet in the messages: read them too.
    const settled = toolMessages(run.frontier.filter((call) => isSettled(call.state)));
    const walked = await readRunbook(definition, (n) => this.runbooks.get(n), [...run.messages, ...settled]);
    const waiting = new Set(view.pending.map((p) => p.callId));
    const nodes = walked.nodes.map((node) =>
      node.callIds?.some((id) => waiting.has(id)) ? { ...node, status: 'waiting' as const } : node,
    );
    const position = nodes.filter((n) => n.status === 'waiting' || n.status === 'running').map((n) => n.path);
    return { ...view, runbook: { name: definition.name, position, nodes, state: walked.state } };
  }

  /**
   * The run, if the caller may read it: its requester, the client that started it for them, an approver one of its
   * calls was routed to, or a `runs-reader`. Anyone else is told it does not exist (404), as for an unknown ID.
   */
  private async readable(runId: string, caller: Principal): Promise<RunRecord> {
    const run = await this.load(runId);
    await this.assertReadable(runId, run, caller);
    return run!;
  }

  private async assertReadable(runId: string, run: RunRecord | undefined, caller: Principal): Promise<void> {
    const allowed =
      run &&
      (run.userId === caller.id ||
        run.submittedBy === caller.id ||
        hasRole(caller, 'runs-reader') ||
        (await this.readers.includes(runId, caller.id)));
    if (!allowed) throw new NotFoundException(`run "${runId}" does not exist`);
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
  async follow(runId: string, caller: Principal, after = 0): Promise<Observable<MessageEvent>> {
    const live = this.events.forRun(runId);
    let start: { replay: MessageEvent[]; last: number; finished: boolean };
    try {
      start = await this.startOfStream(runId, caller, after);
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
    caller: Principal,
    after: number,
  ): Promise<{ replay: MessageEvent[]; last: number; finished: boolean }> {
    let stored = await this.store.loadWithHistory(runId);
    const queued = stored ? undefined : await this.fromStartJob(runId);
    if (!stored && !queued) stored = await this.store.loadWithHistory(runId); // claimed and its job gone meanwhile
    await this.assertReadable(runId, stored?.run ?? queued, caller);
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

/** The definition a runbook run follows, for runs of a `runbook.<name>` agent. */
function runbookOf(agent: string, runbooks: Pick<RunbookLibrary, 'get'>): RunbookDefinition | undefined {
  if (!agent.startsWith(RUNBOOK_AGENT_PREFIX)) return undefined;
  return runbooks.get(agent.slice(RUNBOOK_AGENT_PREFIX.length));
}

/** A 400 naming the field, as the validation pipe's. */
export function badField(field: string, message: string): never {
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
    ...(run.submittedBy ? { submittedBy: run.submittedBy } : {}),
    status: run.status,
    pending: run.frontier.filter(isWaiting).map((c) => toPendingCall(c.body, { withRequestId: true })),
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
