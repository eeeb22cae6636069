// Helpers for approval-service e2e tests: build and enqueue requests, read decisions off the queue.
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { fingerprint } from '@countersign/authorization';
import {
  JobName,
  jobIds,
  QueueName,
  type ApprovalRequest,
  type SignedDecision,
} from '@countersign/contracts';
import { TEST_AUDIT_SECRET } from './audit';
import { directoryEnv, type TestApprover } from './principals';
import { TEST_RATE_LIMITS } from './rate-limits';
import { redisEnv, TEST_REDIS_URL, waitFor, type TestPrefixes } from './redis';

/** A request as a worker would publish it; its request ID follows from its call ID unless given (list order). */
export function approvalRequest(over: Partial<ApprovalRequest> = {}): ApprovalRequest {
  const toolName = over.toolName ?? 'restart_service';
  const args = over.args ?? { service: 'web', replicas: 2 };
  const callId = over.callId ?? `call-${randomBytes(5).toString('hex')}`;
  return {
    requestId: `rq-${callId}`,
    callId,
    runId: `run-${randomBytes(5).toString('hex')}`,
    agent: 'ops',
    requester: 'alice',
    toolDescription: 'Restarts a service',
    tier: 'confirm',
    toolDefinitionHash: 'd'.repeat(64),
    reason: 'confirmation_required',
    attempt: 0,
    requestedAt: new Date().toISOString(),
    ...over,
    toolName,
    args,
    fingerprint: over.fingerprint ?? fingerprint(toolName, args),
  };
}

/** An approval service's environment on the test Redis, under `prefixes`, with test secrets; `extra` adds or overrides. */
export function approvalServiceEnv(
  prefixes: TestPrefixes,
  approvals: { approvers?: readonly TestApprover[] } & object,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...redisEnv(prefixes),
    DECISION_SIGNING_SECRET: 'decision-secret-0123456789',
    LINK_TOKEN_SECRET: 'link-secret-0123456789',
    AUDIT_SIGNING_SECRET: TEST_AUDIT_SECRET,
    ...directoryEnv(approvals),
    ...TEST_RATE_LIMITS,
    ...extra,
  };
}

/** The two public queues as the agent worker sees them. */
export class AgentSideQueues {
  readonly connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  readonly requests: Queue;
  readonly decisions: Queue;
  /** The request ID of the latest request submitted for each call ID, so tests can name requests by call ID. */
  private readonly requestIdOf = new Map<string, string>();

  constructor(prefixes: TestPrefixes) {
    this.requests = new Queue(QueueName.ApprovalRequests, {
      connection: this.connection,
      prefix: prefixes.queuePrefix,
    });
    this.decisions = new Queue(QueueName.ApprovalDecisions, {
      connection: this.connection,
      prefix: prefixes.queuePrefix,
    });
  }

  async submit(request: ApprovalRequest): Promise<ApprovalRequest> {
    this.requestIdOf.set(request.callId, request.requestId);
    await this.requests.add(JobName.RequestApproval, request, {
      jobId: jobIds.approvalRequest(request.requestId),
    });
    return request;
  }

  /** The decision published for the request last submitted with this call ID (or for this request ID). */
  async decision(callId: string): Promise<SignedDecision | undefined> {
    const requestId = this.requestIdOf.get(callId) ?? callId;
    return (await this.decisions.getJob(jobIds.decision(requestId)))?.data as SignedDecision | undefined;
  }

  waitForDecision(callId: string, timeoutMs = 10_000): Promise<SignedDecision> {
    return waitFor(() => this.decision(callId), `decision for ${callId}`, timeoutMs);
  }

  async close(): Promise<void> {
    await Promise.all([this.requests.close(), this.decisions.close()]);
    await this.connection.quit();
  }
}

/**
 * A JSON request to a listening approval service as one caller (`Authorization: Bearer <token>`); the body as JSON,
 * undefined when the answer has none.
 */
export async function callAs(
  baseUrl: string,
  bearerToken: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${bearerToken}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}
