// Drives an in-process agent worker in e2e tests: starts it on a test prefix, plays the approval
// service (signs decisions, reads requests) and reads state through HTTP, the queues and Redis.
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { fingerprint, withSignature } from '@countersign/authorization';
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  type Decision,
  JobName,
  type PendingCall,
  QueueName,
  type RunStatus,
  type RunView,
  type StartRunBody,
  withRequestedAt,
} from '@countersign/contracts';
import { AuditLog } from '@countersign/audit';
import { startAgentWorker, type RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import type { InfraView } from '@countersign/demo-infra';
import { TEST_AUDIT_SECRET, testAuditKeyring } from './audit';
import { bearer, principalsConfig } from './principals';
import { TEST_RATE_LIMITS } from './rate-limits';
import { runHooksFrom } from './test-faults';
import {
  deletePrefixedKeys,
  redisEnv,
  TEST_REDIS_URL,
  type TestPrefixes,
  uniquePrefixes,
  waitFor,
} from './redis';

export const TEST_SECRET = 'e2e-decision-signing-secret';

export function workerEnv(
  prefixes: TestPrefixes,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...redisEnv(prefixes),
    DECISION_SIGNING_SECRET: TEST_SECRET,
    AUDIT_SIGNING_SECRET: TEST_AUDIT_SECRET,
    // The worker's built-in ops tools, in-process (config/agents.json reaches them through the ops MCP server).
    AGENTS_CONFIG: 'test/support/agents.json',
    // The ops tools act on the simulated infrastructure, and the tests count its restarts on /demo/infra.
    SEED_DEMO_INFRA: 'true',
    PRINCIPALS_CONFIG: principalsConfig(),
    STALLED_INTERVAL_MS: '500',
    LOCK_DURATION_MS: '1000',
    // A dead executor is noticed within 3 s (the default 10 s would slow the kill tests down).
    EXECUTION_HEARTBEAT_MS: '300',
    EXECUTION_STALE_MS: '3000',
    JOB_BACKOFF_MS: '50',
    ...TEST_RATE_LIMITS,
    ...extra,
  };
}

export class WorkerHarness {
  readonly prefixes: TestPrefixes;
  readonly redis: Redis;
  readonly decisions: Queue;
  readonly requests: Queue;
  readonly runs: Queue;
  readonly audit: AuditLog;
  private readonly workers: RunningAgentWorker[] = [];

  constructor(label: string) {
    this.prefixes = uniquePrefixes(label);
    this.redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    const queue = (name: string) =>
      new Queue(name, { connection: this.redis, prefix: this.prefixes.queuePrefix });
    this.decisions = queue(QueueName.ApprovalDecisions);
    this.requests = queue(QueueName.ApprovalRequests);
    this.runs = queue(QueueName.AgentRuns);
    this.audit = new AuditLog(this.redis, this.prefixes.keyPrefix, 'test', testAuditKeyring());
  }

  async startWorker(extra: Record<string, string> = {}): Promise<RunningAgentWorker> {
    const env = workerEnv(this.prefixes, extra);
    const worker = await startAgentWorker(env, { port: 0, host: '127.0.0.1', runHooks: runHooksFrom(env) });
    this.workers.push(worker);
    return worker;
  }

  /** Closes every worker still open, the test's queues and connection, and deletes the prefix's keys. */
  async cleanup(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
    await Promise.all([this.decisions, this.requests, this.runs].map((q) => q.close()));
    await this.redis.quit();
    await deletePrefixedKeys(this.prefixes);
  }

  /** Starts a run as `as` (a test principal: the run's requester). */
  async startRun(
    url: string,
    body: Partial<StartRunBody> & { script?: StartRunBody['script'] },
    as = 'alice',
  ): Promise<string> {
    const response = await post(url + '/runs', { agent: 'ops', input: 'please help', ...body }, as);
    if (response.status !== 202)
      throw new Error(`POST /runs answered ${response.status}: ${JSON.stringify(response.body)}`);
    return (response.body as { runId: string }).runId;
  }

  /** The run as `as` sees it (default alice, the requester of the runs these tests start). */
  async run(url: string, runId: string, as = 'alice'): Promise<RunView> {
    const response = await fetch(`${url}/runs/${runId}`, { headers: bearer(as) });
    return (await response.json()) as RunView;
  }

  async waitForStatus(
    url: string,
    runId: string,
    status: RunStatus,
    what = `run ${status}`,
    as = 'alice',
  ): Promise<RunView> {
    return waitFor(async () => {
      const view = await this.run(url, runId, as);
      return view.status === status ? view : undefined;
    }, what);
  }

  /** Parked with exactly `count` pending calls. */
  async waitForPending(url: string, runId: string, count = 1): Promise<PendingCall[]> {
    const view = await waitFor(async () => {
      const v = await this.run(url, runId);
      return v.status === 'awaiting_confirmation' && v.pending.length === count ? v : undefined;
    }, `${count} pending call(s)`);
    return view.pending;
  }

  async infra(url: string): Promise<InfraView> {
    return (await (await fetch(`${url}/demo/infra`, { headers: bearer('alice') })).json()) as InfraView;
  }

  async restarts(url: string, service: string): Promise<number> {
    return (await this.infra(url)).services.find((s) => s.name === service)!.restarts;
  }

  /** A signed decision, as the approval service would publish it (see signedDecision). */
  decision(
    runId: string,
    call: Pick<PendingCall, 'callId' | 'requestId' | 'toolName' | 'args' | 'precondition'>,
    value: 'approve' | 'deny',
    overrides: Partial<Decision> = {},
    secret = TEST_SECRET,
  ): Decision & { signature: string } {
    return signedDecision(runId, call, value, overrides, secret);
  }

  async publishDecision(decision: Record<string, unknown>, jobId?: string): Promise<Job> {
    return this.decisions.add(JobName.Decision, decision, jobId ? { jobId } : {});
  }

  /** Waits until the decision job left the queue (completed or failed) and says which. */
  async settled(job: Job): Promise<'completed' | 'failed'> {
    return waitFor(async () => {
      const state = await this.decisions.getJobState(job.id!);
      return state === 'completed' || state === 'failed' ? state : undefined;
    }, `decision job ${job.id} to settle`);
  }

  /** The newest request published for the call (of the given attempt), parsed as the approval service does. */
  async approvalRequest(callId: string, attempt = 0): Promise<ApprovalRequest | undefined> {
    return (await this.approvalRequests(callId)).filter((r) => r.attempt === attempt).at(-1);
  }

  /** Every request published for a call ID, oldest first (the queue keeps them: nothing consumes it here). */
  async approvalRequests(callId: string): Promise<ApprovalRequest[]> {
    const jobs = await this.requests.getJobs(['wait', 'delayed', 'active', 'completed', 'failed']);
    // Parsed as the approval service does: the worker leaves fields at their default out of the job.
    return jobs
      .filter((job) => (job.data as { callId?: unknown } | undefined)?.callId === callId)
      .sort((a, b) => a.timestamp - b.timestamp)
      .map((job) => ApprovalRequestSchema.parse(withRequestedAt(job.data, job.timestamp)));
  }

  async auditTypes(runId: string): Promise<string[]> {
    return (await this.audit.read({ runId })).map((e) => e.type);
  }
}

/** POST as a test principal (`as`), or without any credential (`as` = undefined). */
export async function post(
  url: string,
  body: unknown,
  as: string | undefined = 'alice',
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(as ? bearer(as) : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

/** Script turns: one tool call per entry, then a final text. */
export function restartScript(...services: string[]): StartRunBody['script'] {
  return [
    { toolCalls: services.map((service) => ({ name: 'restart_service', args: { service } })) },
    { text: 'restarted' },
  ];
}

/**
 * What the approval service would publish: the fingerprint of what the approver was shown, signed, for the request
 * the call waits for (`call.requestId`, as GET /runs/:runId shows it).
 */
export function signedDecision(
  runId: string,
  call: Pick<PendingCall, 'callId' | 'requestId' | 'toolName' | 'args' | 'precondition'>,
  value: 'approve' | 'deny',
  overrides: Partial<Decision> = {},
  secret = TEST_SECRET,
): Decision & { signature: string } {
  const shown = overrides.shown ?? { toolName: call.toolName, args: call.args };
  if (!call.requestId && !overrides.requestId) throw new Error(`call ${call.callId} has no request ID`);
  const decision: Decision = {
    requestId: call.requestId!,
    callId: call.callId,
    runId,
    decision: value,
    decidedBy: 'person',
    approvers: ['bob'],
    fingerprint: fingerprint(shown.toolName, shown.args),
    shown,
    attempt: 0,
    decidedAt: new Date().toISOString(),
    // As the approval service signs it: the precondition value the request showed (GET /runs says it).
    ...(call.precondition ? { precondition: call.precondition.digest } : {}),
    ...overrides,
  };
  return withSignature({ ...decision }, secret);
}
