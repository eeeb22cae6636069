// The approval service as agents Countersign does not run see it: the approvals API (/external-approvals) on a real
// listening server and the test Redis, with approvers who decide through the REST API as people would.
//
//   const harness = await ExternalHarness.start('sdk');
//   const client = new CountersignClient({ baseUrl: harness.url, token: testToken('agent-bot') });
//   ...
//   await harness.approve(approvalId);
//   await harness.close();
import type { AuditEntry } from '@countersign/contracts';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { approvalServiceEnv } from './approval-harness';
import { approvalsConfig, approvers, group, type TestApprovalsConfig } from './fixtures';
import { testToken } from './principals';
import { deletePrefixedKeys, uniquePrefixes, waitFor, type TestPrefixes } from './redis';

/** The approvers: bob, carol and dave, with the default test tokens; alice (a requester) is in `ops` as well. */
export const EXTERNAL_APPROVALS = approvalsConfig({
  approvers: approvers('bob', 'carol', 'dave'),
  groups: [group('ops', ['bob', 'carol', 'alice']), group('pair', ['carol', 'dave'])],
  rules: [
    {
      name: 'short-lived',
      match: { tool: 'short_*' },
      groups: ['ops'],
      expiresIn: '1500ms',
      channels: ['web'],
    },
    { name: 'two approvers', match: { tool: 'pair_*' }, groups: ['pair'], quorum: 2, channels: ['web'] },
    { name: 'agent-bot', match: { agent: 'agent-bot' }, groups: ['ops'], channels: ['web'] },
    { name: 'team-bot', match: { agent: 'team-bot' }, groups: ['ops'], channels: ['web'] },
    // Calls through the MCP gateway (test/mcp-gateway*.e2e-spec.ts); its `short_*` tools expire as above.
    { name: 'mcp-gateway', match: { agent: 'mcp-gateway' }, groups: ['ops'], channels: ['web'] },
  ],
  // No default group: other-bot's calls match no rule, so they have no route.
  defaultGroup: undefined,
});

export const WEBHOOK_SIGNING_SECRET = 'webhook-secret-0123456789';

/**
 * A fetch for the SDK's client that rewrites whom calls are for on the way (`onBehalfOf` in bodies and queries), as a
 * tampering proxy would: the service then answers one person's call with another's approval, and only the SDK's own
 * checks stand between that answer and the tool. The requests still go to the real service.
 */
export function rewritingOnBehalfOf(from: string, to: string): typeof fetch {
  return (input, init) =>
    fetch(
      String(input).replace(`onBehalfOf=${from}`, `onBehalfOf=${to}`),
      init && {
        ...init,
        body:
          typeof init.body === 'string'
            ? init.body.replace(`"onBehalfOf":"${from}"`, `"onBehalfOf":"${to}"`)
            : init.body,
      },
    );
}

export class ExternalHarness {
  readonly prefixes: TestPrefixes;
  service!: RunningApprovalService;

  private constructor(label: string) {
    this.prefixes = uniquePrefixes(label);
  }

  /**
   * Starts an approval service of its own (own prefixes); `env` adds or overrides variables, `approvals` replaces the
   * groups and rules (EXTERNAL_APPROVALS).
   */
  static async start(
    label: string,
    env: Record<string, string> = {},
    approvals: TestApprovalsConfig = EXTERNAL_APPROVALS,
  ): Promise<ExternalHarness> {
    const harness = new ExternalHarness(label);
    harness.service = await startApprovalService(
      approvalServiceEnv(harness.prefixes, approvals, {
        TIMER_SWEEP_MS: '50',
        TIMER_LEASE_MS: '2000',
        NOTIFY_BACKOFF: '50ms',
        WEBHOOK_SIGNING_SECRET,
        ...env,
      }),
      { port: 0, host: '127.0.0.1' },
    );
    return harness;
  }

  get url(): string {
    return this.service.url;
  }

  async api<T = unknown>(
    method: string,
    path: string,
    as: string,
    body?: unknown,
  ): Promise<{ status: number; json: T; headers: Headers }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${testToken(as)}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
  }

  /** An approver's vote through the REST API (what the CLI and the inbox send); throws unless it was counted. */
  async decide(approvalId: string, decision: 'approve' | 'deny', as = 'bob', reason?: string): Promise<void> {
    const { status, json } = await this.api('POST', `/approvals/${approvalId}/decisions`, as, {
      decision,
      ...(reason === undefined ? {} : { reason }),
    });
    if (status !== 200 && status !== 202)
      throw new Error(`${as} could not ${decision} ${approvalId}: ${status} ${JSON.stringify(json)}`);
  }

  approve(approvalId: string, as = 'bob'): Promise<void> {
    return this.decide(approvalId, 'approve', as);
  }

  deny(approvalId: string, reason: string, as = 'bob'): Promise<void> {
    return this.decide(approvalId, 'deny', as, reason);
  }

  /** Answers with `response` instead of a verdict (decision "respond"): the call is not to run. */
  async respond(approvalId: string, response: string, as = 'bob'): Promise<void> {
    const { status, json } = await this.api('POST', `/approvals/${approvalId}/decisions`, as, {
      decision: 'respond',
      response,
    });
    if (status !== 200)
      throw new Error(`${as} could not respond to ${approvalId}: ${status} ${JSON.stringify(json)}`);
  }

  /** The pending approvals routed to `as` (what the inbox lists). */
  async pendingFor(as = 'bob'): Promise<string[]> {
    const { json } = await this.api<{ request: { callId: string } }[]>(
      'GET',
      '/approvals?status=pending',
      as,
    );
    return json.map((a) => a.request.callId);
  }

  /** Waits until an approval is pending for `as` and returns its ID (the newest when several are). */
  async waitForPending(as = 'bob', except: readonly string[] = []): Promise<string> {
    const ids = await waitFor(async () => {
      const pending = (await this.pendingFor(as)).filter((id) => !except.includes(id));
      return pending.length > 0 ? pending : undefined;
    }, `a pending approval for ${as}`);
    return ids[ids.length - 1];
  }

  async audit(callId: string): Promise<AuditEntry[]> {
    return (await this.api<AuditEntry[]>('GET', `/audit?callId=${callId}`, 'auditor')).json;
  }

  async close(): Promise<void> {
    await this.service?.close();
    await deletePrefixedKeys(this.prefixes);
  }
}
