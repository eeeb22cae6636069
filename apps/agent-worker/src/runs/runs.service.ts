// Runs as HTTP sees them: start one (through the agent-runs queue), read it, follow its events.
import { randomUUID } from 'node:crypto';
import {
  BadRequestException,
  ForbiddenException,
  NotFoundException,
  type MessageEvent,
} from '@nestjs/common';
import { concat, from, merge, type Observable, takeWhile, map, EMPTY } from 'rxjs';
import { RunEventName, type RunEvent, type RunView, type StartRunBody } from '@countersign/contracts';
import { hasRole, mayActFor, type AuditLog, type Principal, type RunReaders } from '@countersign/platform';
import type { AgentCatalog } from '../agents/agent-catalog';
import type { RunsProducer } from '../queues/producers';
import { isWaiting, toPendingCall } from './frontier';
import type { RunEvents } from './run-events';
import type { RunRecord } from './run-state';
import type { RunStore } from './run-store';
import { toNewRun } from './run-loop';

export interface RunsServiceDeps {
  store: RunStore;
  catalog: AgentCatalog;
  producer: RunsProducer;
  events: RunEvents;
  audit: AuditLog;
  readers: RunReaders;
}

export class RunsService {
  private readonly store: RunStore;
  private readonly catalog: AgentCatalog;
  private readonly producer: RunsProducer;
  private readonly events: RunEvents;

  constructor(private readonly deps: RunsServiceDeps) {
    ({ store: this.store, catalog: this.catalog, producer: this.producer, events: this.events } = deps);
  }

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
      await this.deps.audit.append({
        type: 'run.started',
        runId: job.runId,
        actor: caller.id,
        detail: { agent: job.agent, onBehalfOf: userId },
      });
    await this.producer.startRun(job);
    return { runId: job.runId };
  }

  async view(runId: string, caller: Principal): Promise<RunView> {
    return toView(await this.readable(runId, caller));
  }

  /**
   * The run, if the caller may read it: its requester, the client that started it for them, an approver one of its
   * calls was routed to, or a `runs-reader`. Anyone else is told it does not exist (404), as for an unknown ID.
   */
  private async readable(runId: string, caller: Principal): Promise<RunRecord> {
    const run = await this.load(runId);
    const allowed =
      run &&
      (run.userId === caller.id ||
        run.submittedBy === caller.id ||
        hasRole(caller, 'runs-reader') ||
        (await this.deps.readers.includes(runId, caller.id)));
    if (!allowed) throw new NotFoundException(`run "${runId}" does not exist`);
    return run;
  }

  /** The run as stored, or, before any worker claimed it, as its start job says (queued, or failed for good). */
  private async load(runId: string): Promise<RunRecord | undefined> {
    const stored = await this.store.load(runId);
    if (stored) return stored;
    const start = await this.producer.findStart(runId);
    if (!start) return this.store.load(runId); // claimed and its job gone meanwhile
    const { script: _script, ...run } = toNewRun(start.job);
    return {
      ...run,
      status: start.failedReason ? 'failed' : 'queued',
      ...(start.failedReason ? { error: start.failedReason } : {}),
      frontier: [],
    };
  }

  /** A snapshot of where the run is, then live events until `done`. */
  async follow(runId: string, caller: Principal): Promise<Observable<MessageEvent>> {
    const live = this.events.forRun(runId); // subscribed before the snapshot is read, so nothing falls between
    const run = await this.readable(runId, caller);
    const snapshot = snapshotEvents(run);
    const finished = snapshot.some((e) => e.type === RunEventName.Done);
    return concat(from(snapshot), finished ? EMPTY : merge(live)).pipe(
      takeWhile((e) => e.type !== RunEventName.Done, true),
      map((e): MessageEvent => ({ type: e.type, data: e })),
    );
  }
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
    ...(run.submittedBy ? { submittedBy: run.submittedBy } : {}),
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
  if (run.status === 'completed' || run.status === 'failed') {
    events.push({ type: RunEventName.Done, runId: run.runId, status: run.status, result: run.result });
  }
  return events;
}
