// The run loop with plain fakes for everything around the pipeline (store, model, queues, audit, events,
// metrics): what a fresh turn runs, records and tells the model. Redis behaviour is in test/agent-worker/*.e2e-spec.ts.
import { z } from 'zod';
import { CallState } from '@countersign/call-ledger';
import {
  type ConfirmationHandler,
  defineTool,
  fingerprint,
  type ToolDefinition,
  type ToolPlugin,
  ToolCallPipeline,
  ToolRegistry,
} from '@countersign/authorization';
import type { ApprovalRequest, ChatMessage, RunEvent, StartRunJob, Tier } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AuditInput, AuditLog } from '@countersign/audit';
import type { AgentRuntime } from '../agents/agent-builder';
import type { AgentCatalog } from '../agents/agent-catalog';
import { AgentConfigSchema } from '../config/agents-config.schema';
import type { ChatModel, ModelReply, ModelRequest, ModelToolCall } from '../models/chat-model';
import type { WorkerMetrics } from '../core/worker-metrics';
import type { WorkerConfig } from '../config/worker-config';
import { CallExecution } from './call-execution';
import { FrontierSettlement } from './frontier-settlement';
import { RunEndings } from './run-endings';
import type { RunEvents } from './run-events';
import { NO_RUN_HOOKS } from './run-hooks';
import type { UnpublishedRequest } from './run-keys';
import { RunLoop } from './run-loop';
import { RunParking } from './run-parking';
import { type FrontierCall, type Lease, type RunRecord } from './run-state';
import type { RunCalls } from './run-calls';
import type { NewRun } from './run-state-codec';
import type { RunStore } from './run-store';
import type { UnpublishedRequests } from './unpublished-requests';
import { OwnershipLostError } from './run-store.errors';

const lease: Lease = { jobId: 'job-1', token: 'token-1', started: 1 };
const job: StartRunJob = { runId: 'run-1', agent: 'ops', userId: 'alice', input: 'go', scopes: [] };

/** An auto, confirm or manual tool whose handler counts its runs; with `fails`, each run throws after it counted. */
function countingTool(name: string, tier: Tier, fails?: string) {
  const ran: string[] = [];
  const definition = defineTool({
    name,
    description: `test tool ${name}`,
    args: z.object({ service: z.string() }),
    tier,
    handler: (args, ctx) => {
      ran.push(ctx.callId);
      if (fails) throw new Error(fails);
      return `${name} ${args.service}`;
    },
  });
  return { definition: definition as ToolDefinition, ran };
}

/** Only what RunLoop calls on a fresh run; the owner check can be made to fail. */
class FakeRunStore {
  ownerChecks: { executionsSoFar: number }[] = [];
  lost = false;
  parked?: { messages: ChatMessage[]; frontier: FrontierCall[] };
  /** Park steps in order: what the unpublished index was told, and the park itself. */
  steps: string[] = [];
  finished?: { status: string; messages?: ChatMessage[]; result?: string; error?: string };

  constructor(private readonly executions: () => number) {}

  /** Where the claim's events go (the run's history, as the events script would store them). */
  history: RunEvent[] = [];

  async claimRun(
    run: NewRun,
    _lease: Lease,
    onClaim: RunEvent[] = [],
  ): Promise<{ kind: 'claimed'; run: RunRecord }> {
    this.history.push(...onClaim);
    return { kind: 'claimed', run: { ...run, status: 'running', frontier: [], script: undefined } };
  }

  async assertOwner(runId: string): Promise<void> {
    this.ownerChecks.push({ executionsSoFar: this.executions() });
    if (this.lost) throw new OwnershipLostError(runId);
  }

  async parkRun(_runId: string, _lease: Lease, messages: ChatMessage[], frontier: FrontierCall[]) {
    this.steps.push('park');
    this.parked = { messages, frontier };
  }

  /** Each checkpoint's messages, in order; fails as the script does once the run was taken over. */
  checkpoints: ChatMessage[][] = [];
  checkpointLost = false;

  async checkpointRun(runId: string, _lease: Lease, messages: ChatMessage[]) {
    if (this.checkpointLost) throw new OwnershipLostError(runId);
    this.checkpoints.push(messages);
  }

  /** The index's ZADD fails (the park, sent in the same trip, lands). */
  unpublishedFails = false;

  async markUnpublished(requests: UnpublishedRequest[]) {
    if (this.unpublishedFails) throw new Error('ZADD failed');
    this.steps.push(...requests.map((r) => `unpublished ${r.callId} ${r.requestId}`));
  }

  async markPublished(requests: UnpublishedRequest[]) {
    this.steps.push(...requests.map((r) => `published ${r.callId} ${r.requestId}`));
  }

  async finishRun(_runId: string, _lease: Lease, end: NonNullable<FakeRunStore['finished']>) {
    this.finished = end;
    return true;
  }

  // The call transitions of a resume: each succeeds.
  async startCall(_runId: string, _lease: Lease, callId: string) {
    this.steps.push(`start ${callId}`);
  }

  /** The events the result-recording script added with each call's result. */
  withResults: RunEvent[] = [];

  async completeCall(
    _runId: string,
    _lease: Lease,
    _callId: string,
    _token: string,
    _result: unknown,
    events: RunEvent[] = [],
  ) {
    this.withResults.push(...events);
    this.history.push(...events);
    return { stillOwner: true };
  }

  async transitionCall(_runId: string, _lease: Lease, callId: string, from: string, to: string) {
    this.steps.push(`${from} → ${to} ${callId}`);
  }
}

/** Plays the given turns, then answers with text; keeps every request. */
class FakeModel implements ChatModel {
  readonly requests: ModelRequest[] = [];
  constructor(
    private readonly turns: ModelToolCall[][],
    readonly provider: ChatModel['provider'] = 'scripted',
  ) {}

  async next(request: ModelRequest): Promise<ModelReply> {
    this.requests.push(request);
    const calls = this.turns[this.requests.length - 1];
    return calls ? { kind: 'tool_calls', calls } : { kind: 'text', text: 'finished' };
  }
}

function counter() {
  const incs: Record<string, unknown>[] = [];
  return { incs, inc: (labels: Record<string, unknown> = {}) => void incs.push(labels) };
}

function setup(options: {
  turns: ModelToolCall[][];
  plugins?: ToolPlugin[];
  maxConcurrentTools?: number;
  confirmationHandler?: ConfirmationHandler;
  provider?: ChatModel['provider'];
}) {
  const tools = {
    read_logs: countingTool('read_logs', 'auto'),
    restart_service: countingTool('restart_service', 'confirm'),
    drop_database: countingTool('drop_database', 'manual_only'),
    flaky_probe: countingTool('flaky_probe', 'auto', 'probe crashed half-way'),
  };
  const registry = new ToolRegistry(Object.values(tools).map((t) => t.definition));
  const pipeline = new ToolCallPipeline({
    registry,
    plugins: options.plugins,
    maxConcurrentTools: options.maxConcurrentTools,
    confirmationHandler: options.confirmationHandler,
  });
  const model = new FakeModel(options.turns, options.provider);
  const config = AgentConfigSchema.parse({ tools: Object.keys(tools), roles: {}, users: {} });
  const agent: AgentRuntime = { name: 'ops', config, pipeline, registry, model };
  const executions = () => Object.values(tools).reduce((n, t) => n + t.ran.length, 0);

  const store = new FakeRunStore(executions);
  const audit: AuditInput[] = [];
  /** The entries of each append call, by type: entries of one call go out in one script call. */
  const auditCalls: string[][] = [];
  const record = (entries: readonly AuditInput[]) => {
    audit.push(...entries);
    auditCalls.push(entries.map((e) => e.type));
    return entries.map(() => 'id');
  };
  const requests: ApprovalRequest[] = [];
  // The claim script and the events script write the same history.
  const events = store.history;
  const metrics = {
    runsStarted: counter(),
    runsParked: counter(),
    runsFinished: counter(),
    toolCalls: counter(),
    runsResumed: counter(),
    decisionToResume: { observe: () => undefined },
  };
  const quiet = () => undefined;
  const logger = { info: quiet, warn: quiet, debug: quiet, error: quiet } as unknown as Logger;
  const auditLog = {
    append: async (entry: AuditInput) => record([entry])[0],
    appendAll: async (entries: readonly AuditInput[]) => record(entries),
  } as unknown as AuditLog;
  const runEvents = {
    publish: (...e: RunEvent[]) => void events.push(...e),
    publishOnce: (_marker: string, e: RunEvent) => void events.push(e),
  } as RunEvents;
  const workerMetrics = metrics as unknown as WorkerMetrics;
  const catalog = { get: (name: string) => (name === 'ops' ? agent : undefined) } as AgentCatalog;
  const workerConfig = {
    env: { EXECUTION_HEARTBEAT_MS: 1_000, EXECUTION_STALE_MS: 10_000, FINISHED_RUN_TTL_SECONDS: 60 },
  } as unknown as WorkerConfig;
  const calls = store as unknown as RunCalls;
  const endings = new RunEndings(store as unknown as RunStore, workerMetrics, logger);
  const parking = new RunParking(
    store as unknown as RunStore,
    store as unknown as UnpublishedRequests,
    catalog,
    { requestApproval: async (r: ApprovalRequest) => void requests.push(r) },
    { publish: async () => undefined },
    runEvents,
    auditLog,
    workerMetrics,
    logger,
    NO_RUN_HOOKS,
  );
  const execution = new CallExecution(calls, auditLog, workerMetrics, logger, workerConfig);
  const settlement = new FrontierSettlement(
    calls,
    execution,
    { record: async () => undefined },
    runEvents,
    auditLog,
    workerMetrics,
    logger,
    workerConfig,
    { keep: async () => undefined },
  );
  const sut = new RunLoop(
    store as unknown as RunStore,
    catalog,
    settlement,
    parking,
    endings,
    runEvents,
    auditLog,
    workerMetrics,
    logger,
    NO_RUN_HOOKS,
    // Sticky denials have their own spec and e2e test: here no call was denied before.
    { refuseRepeats: async (_run, _agent, frontier) => frontier },
  );
  const outcomesCounted = () => metrics.toolCalls.incs.map((labels) => labels.outcome);
  const toolResults = () => events.filter((e) => e.type === 'tool_result');
  return {
    sut,
    agent,
    tools,
    executions,
    store,
    model,
    audit,
    auditCalls,
    requests,
    events,
    outcomesCounted,
    toolResults,
  };
}

const logs = (id: string, service = 'api'): ModelToolCall => ({ id, name: 'read_logs', args: { service } });
const restart = (id: string, service = 'api'): ModelToolCall => ({
  id,
  name: 'restart_service',
  args: { service },
});

/** Aborts the run when it sees the call `abortingId`. */
const killSwitch = (abortingId: string): ToolPlugin => ({
  name: 'kill-switch',
  beforeTool: (c) => (c.callId === abortingId ? { action: 'abort', reason: 'budget exhausted' } : undefined),
});

describe('RunLoop, a fresh turn', () => {
  it.each([
    ['one at a time', 1],
    ['all at once', 4],
  ])(
    'runs none of the ready calls of a turn in which a callback aborts, and fails the run (%s)',
    async (_case, maxConcurrentTools) => {
      const { sut, tools, store, audit, outcomesCounted, toolResults } = setup({
        turns: [[logs('c1'), logs('c2', 'db'), logs('c3')]],
        plugins: [killSwitch('c3')],
        maxConcurrentTools,
      });
      await sut.start(job, lease);

      expect(tools.read_logs.ran).toEqual([]);
      expect(store.finished).toMatchObject({
        status: 'failed',
        error: 'Run aborted by "kill-switch": budget exhausted',
      });
      expect(store.ownerChecks).toEqual([]);
      expect(audit.filter((e) => e.type === 'tool.executed')).toEqual([]);
      expect(outcomesCounted()).toEqual(['aborted', 'aborted', 'aborted']);
      expect(toolResults().map((e) => e.type === 'tool_result' && [e.callId, e.outcome])).toEqual([
        ['c1', 'aborted'],
        ['c2', 'aborted'],
        ['c3', 'aborted'],
      ]);
    },
  );

  it('refuses a turn that repeats a call ID as the model sent it: nothing runs and the model is told', async () => {
    const { sut, executions, store, model } = setup({
      turns: [[logs('c1'), logs('c1', 'db')]],
    });
    await sut.start(job, lease);

    expect(executions()).toBe(0);
    expect(store.ownerChecks).toEqual([{ executionsSoFar: 0 }]); // only the one before the next model turn
    const [assistant, ...results] = model.requests[1].messages.slice(1);
    expect(assistant).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'c1' }, { id: 'c1' }] });
    expect(results).toHaveLength(2);
    for (const message of results) {
      expect(message).toMatchObject({ role: 'tool', toolCallId: 'c1' });
      expect(message.content).toMatch(/^Nothing in this turn ran: call ID "c1" was given to more than one/);
    }
    expect(store.finished).toMatchObject({ status: 'completed', result: 'finished' });
  });

  it('checks ownership once, after authorizing and before the first ready call runs', async () => {
    const { sut, tools, store } = setup({ turns: [[logs('c1'), logs('c2', 'db')]] });
    await sut.start(job, lease);

    // The second check is the one before the follow-up model turn.
    expect(store.ownerChecks).toEqual([{ executionsSoFar: 0 }, { executionsSoFar: 2 }]);
    expect(tools.read_logs.ran).toEqual(['c1', 'c2']);
    expect(store.finished).toMatchObject({ status: 'completed' });
  });

  it('runs nothing when the run was taken over between authorizing and executing', async () => {
    const { sut, executions, store, audit, events } = setup({ turns: [[logs('c1'), logs('c2', 'db')]] });
    store.lost = true;

    await expect(sut.start(job, lease)).rejects.toBeInstanceOf(OwnershipLostError);
    expect(executions()).toBe(0);
    expect(store.finished).toBeUndefined();
    expect(audit).toEqual([]);
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([]);
  });

  it('runs the auto call, parks the one that waits, and records each as before', async () => {
    const { sut, tools, store, audit, requests, events, outcomesCounted } = setup({
      turns: [[logs('c1'), restart('c2'), { id: 'c3', name: 'drop_database', args: { service: 'db' } }]],
    });
    await sut.start(job, lease);

    expect(tools.read_logs.ran).toEqual(['c1']);
    expect(tools.restart_service.ran).toEqual([]);
    expect(tools.drop_database.ran).toEqual([]);
    // Each call is recorded as soon as its outcome is known: the ones that run nothing before the one that runs; a
    // waiting call once the turn knows it still waits (a denial that sticks may refuse it first).
    expect(outcomesCounted()).toEqual(['manual_required', 'executed', 'pending_confirmation']);
    expect(audit).toEqual([
      expect.objectContaining({ type: 'tool.executed', callId: 'c1', actor: 'auto' }),
      expect.objectContaining({ type: 'run.parked', detail: { pending: ['c2'] } }),
    ]);
    expect(store.parked?.frontier.map((c) => [c.body.id, c.state])).toEqual([
      ['c1', CallState.Done],
      ['c2', CallState.Pending],
      ['c3', CallState.Done],
    ]);
    expect(requests.map((r) => [r.callId, r.reason])).toEqual([
      ['c3', 'manual_step'],
      ['c2', 'confirmation_required'],
    ]);
    expect(events.map((e) => [e.type, 'callId' in e ? e.callId : 'call' in e ? e.call.callId : ''])).toEqual([
      ['status', ''],
      ['tool_result', 'c1'],
      ['tool_result', 'c3'],
      ['tool_confirmation', 'c2'],
      ['status', ''],
    ]);
  });

  it('notes a waiting call as unpublished before the run parks, and as published only once its request is out', async () => {
    const { sut, store, requests } = setup({ turns: [[restart('c1'), restart('c2', 'db')]] });
    await sut.start(job, lease);

    const [c1, c2] = requests.map((r) => r.requestId);
    expect(store.steps).toEqual([
      `unpublished c1 ${c1}`,
      `unpublished c2 ${c2}`,
      'park',
      `published c1 ${c1}`,
      `published c2 ${c2}`,
    ]);
    expect(store.parked?.frontier.map((c) => c.body.requestId)).toEqual([c1, c2]);
    expect(new Set([c1, c2]).size).toBe(2);
  });

  it('fails the job when the park landed but its index entry did not: no request goes out until its retry republishes', async () => {
    const { sut, store, requests } = setup({ turns: [[restart('c1')]] });
    store.unpublishedFails = true;

    await expect(sut.start(job, lease)).rejects.toThrow('ZADD failed');
    expect(store.steps).toEqual(['park']);
    expect(requests).toEqual([]);
  });

  it('audits an execution that failed, with the error, and tells the model', async () => {
    const { sut, tools, audit, model } = setup({
      turns: [[{ id: 'c1', name: 'flaky_probe', args: { service: 'api' } }]],
    });
    await sut.start(job, lease);

    expect(tools.flaky_probe.ran).toEqual(['c1']);
    expect(audit).toEqual([
      expect.objectContaining({
        type: 'tool.failed',
        callId: 'c1',
        detail: { toolName: 'flaky_probe', error: 'probe crashed half-way' },
      }),
    ]);
    expect(model.requests[1].messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'Tool "flaky_probe" failed: probe crashed half-way',
    });
  });

  it('audits a call a policy approved as started before its tool runs, then as executed', async () => {
    const { sut, tools, audit } = setup({
      turns: [[restart('c1')]],
      confirmationHandler: () => ({ decision: 'approve' }),
    });
    const auditedBeforeRun: string[] = [];
    const handler = tools.restart_service.definition.handler;
    tools.restart_service.definition.handler = (args, ctx) => {
      auditedBeforeRun.push(...audit.map((e) => e.type));
      return handler(args, ctx);
    };
    await sut.start(job, lease);

    expect(tools.restart_service.ran).toEqual(['c1']);
    expect(auditedBeforeRun).toEqual(['tool.started']);
    expect(audit.map((e) => [e.type, e.callId, e.actor])).toEqual([
      ['tool.started', 'c1', 'policy'],
      ['tool.executed', 'c1', 'policy'],
    ]);
  });

  it('audits a refusal by a guard and tells the model', async () => {
    const guard: ToolPlugin = {
      name: 'no-db',
      beforeTool: (c) => {
        if ((c.args as { service: string }).service === 'db') throw new Error('db is off limits');
      },
    };
    const { sut, tools, audit, model } = setup({ turns: [[logs('c1', 'db')]], plugins: [guard] });
    await sut.start(job, lease);

    expect(tools.read_logs.ran).toEqual([]);
    expect(audit).toEqual([
      expect.objectContaining({
        type: 'tool.denied',
        callId: 'c1',
        actor: 'guard',
        detail: expect.objectContaining({ reason: expect.stringMatching(/db is off limits/) }),
      }),
    ]);
    expect(model.requests[1].messages.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c1' });
  });
});

describe('RunLoop, resuming on a decision', () => {
  /** A run parked on restart_service(api), decided as `decision` by bob. */
  function decided(agent: AgentRuntime, decision: 'approve' | 'deny'): RunRecord {
    const args = { service: 'api' };
    const fp = fingerprint('restart_service', args);
    const call: FrontierCall = {
      state: decision === 'approve' ? CallState.Approved : CallState.Denied,
      body: {
        id: 'c1',
        name: 'restart_service',
        args,
        tier: 'confirm',
        fingerprint: fp,
        definitionHash: agent.registry.get('restart_service')!.definitionHash,
        attempt: 0,
        reason: 'confirmation_required',
        requestId: 'rq-1',
        position: 0,
      },
      decision: { decision, decidedBy: 'person', approvers: ['bob'], fingerprint: fp, decidedAt: 'now' },
    };
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }];
    return {
      runId: 'run-1',
      agent: 'ops',
      userId: 'alice',
      scopes: [],
      status: 'running',
      messages,
      frontier: [call],
    };
  }

  it('writes run.resumed in the same append as the first tool.started, both before the tool runs', async () => {
    const { sut, agent, tools, audit, auditCalls, events, store } = setup({ turns: [] });
    const auditedBeforeRun: string[] = [];
    const handler = tools.restart_service.definition.handler;
    tools.restart_service.definition.handler = (args, ctx) => {
      auditedBeforeRun.push(...audit.map((e) => e.type));
      return handler(args, ctx);
    };
    await sut.resume(decided(agent, 'approve'), lease, Date.now(), { announced: true });

    expect(tools.restart_service.ran).toEqual(['c1']);
    expect(auditedBeforeRun).toEqual(['run.resumed', 'tool.started']);
    expect(auditCalls).toEqual([['run.resumed', 'tool.started'], ['tool.executed']]);
    // The script that recorded the result told the followers (no events call of its own), once.
    const result = {
      type: 'tool_result',
      runId: 'run-1',
      callId: 'c1',
      toolName: 'restart_service',
      outcome: 'executed',
    };
    expect(store.withResults).toEqual([expect.objectContaining(result)]);
    expect(events.filter((e) => e.type === 'tool_result')).toEqual(store.withResults);
    // The decision script announced the run: no second `running` event.
    expect(events.filter((e) => e.type === 'status' && e.status === 'running')).toEqual([]);
  });

  it('writes run.resumed with the denial, before the model turn, and announces a takeover', async () => {
    const { sut, agent, audit, auditCalls, model, events } = setup({ turns: [] });
    let auditedBeforeTurn: string[] = [];
    const next = model.next.bind(model);
    model.next = (request) => ((auditedBeforeTurn = audit.map((e) => e.type)), next(request));
    await sut.resume(decided(agent, 'deny'), lease, Date.now());

    expect(auditedBeforeTurn).toEqual(['run.resumed', 'tool.denied']);
    expect(auditCalls).toEqual([['run.resumed', 'tool.denied']]);
    expect(events.filter((e) => e.type === 'status' && e.status === 'running')).toHaveLength(1);
  });
});

describe('RunLoop, checkpoints between parks', () => {
  it("stores a runbook run's conversation after every turn whose calls all finished, and not the turn that parks", async () => {
    const { sut, store, model } = setup({
      turns: [[logs('c1')], [logs('c2', 'db')], [restart('c3')]],
      provider: 'runbook',
    });
    await sut.start(job, lease);

    expect(store.checkpoints.map((messages) => messages.length)).toEqual([3, 5]);
    // Each checkpoint is what the next model turn was asked with: a new owner goes on from there.
    expect(store.checkpoints[0]).toEqual(model.requests[1].messages);
    expect(store.checkpoints[1]).toEqual(model.requests[2].messages);
    expect(store.checkpoints[1].at(-1)).toMatchObject({ role: 'tool', toolCallId: 'c2' });
    expect(store.parked?.frontier.map((c) => c.body.id)).toEqual(['c3']);
  });

  it("leaves an agent run's turns in memory until it parks or ends", async () => {
    const { sut, store } = setup({ turns: [[logs('c1')], [logs('c2', 'db')]] });
    await sut.start(job, lease);

    expect(store.checkpoints).toEqual([]);
    expect(store.finished).toMatchObject({ status: 'completed' });
  });

  it('stops a runbook run whose checkpoint finds it taken over, before its next model turn', async () => {
    const { sut, store, model } = setup({ turns: [[logs('c1')], [logs('c2', 'db')]], provider: 'runbook' });
    store.checkpointLost = true;

    await expect(sut.start(job, lease)).rejects.toBeInstanceOf(OwnershipLostError);
    expect(model.requests).toHaveLength(1);
    expect(store.finished).toBeUndefined();
  });
});
