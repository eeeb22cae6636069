// The whole system for end-to-end tests: agent worker + approval service in-process on one shared Redis prefix,
// a local Slack API stand-in and a real local SMTP server capturing mail — started with one call.
//
//   const system = await TestSystem.start('slack');
//   const runId = await system.startRun(restartScript('web'));
//   ...
//   await system.close();
import { startAgentWorker, type RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import type { InfraView } from '@countersign/demo-infra';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { slackSignature } from '../../apps/approval-service/src/channels/slack/slack-signature';
import type {
  ApprovalView,
  AuditEntry,
  PendingCall,
  RunStatus,
  RunView,
  StartRunBody,
} from '@countersign/contracts';
import { FakeSlackApi } from './fake-slack-api';
import { approvalsConfig, approver, group } from './fixtures';
import { directoryEnv, testToken, type TestApprover } from './principals';
import { TEST_RATE_LIMITS } from './rate-limits';
import { runHooksFrom } from './test-faults';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor, type TestPrefixes } from './redis';
import { SmtpCapture, type CapturedMail } from './smtp-capture';

export const SYSTEM_SECRETS = {
  DECISION_SIGNING_SECRET: 'system-decision-secret-0123456789',
  LINK_TOKEN_SECRET: 'system-link-secret-0123456789',
  AUDIT_SIGNING_SECRET: 'system-audit-signing-secret-0123456789abcdef',
  SLACK_SIGNING_SECRET: 'system-slack-signing-secret',
  SLACK_BOT_TOKEN: 'xoxb-system-test',
};

/** Approvers of the system tests. The agents config's users are alice/bob (operators) and mallory (viewer). */
export const SYSTEM_APPROVERS = {
  bob: approver('bob', { name: 'Bob Builder' }),
  carol: approver('carol', { name: 'Carol Ops' }),
};
export type SystemApprover = keyof typeof SYSTEM_APPROVERS;

export const SYSTEM_APPROVALS_CONFIG = approvalsConfig({
  approvers: Object.values(SYSTEM_APPROVERS),
  groups: [group('ops', ['bob', 'carol'], '#ops-approvals')],
  defaults: { channels: ['slack', 'email', 'web'], expiresIn: '30m' },
});

export interface SystemOptions {
  /** Extra environment of the agent worker(s). */
  workerEnv?: Record<string, string>;
  /** Extra environment of the approval service (e.g. APPROVALS_CONFIG). */
  approvalEnv?: Record<string, string>;
  /** Agent workers to start (they share the prefix, as replicas do). Default 1. */
  workers?: number;
}

export class TestSystem {
  readonly slack = new FakeSlackApi();
  readonly smtp = new SmtpCapture();
  readonly workers: RunningAgentWorker[] = [];
  approvals!: RunningApprovalService;
  /** The approvers of the approvals config, whose tokens replace the default test principals' of the same ID. */
  private approvers: readonly TestApprover[] = [];

  private constructor(readonly prefixes: TestPrefixes) {}

  /** Starts the Slack stand-in, the SMTP capture, the approval service and the agent worker(s). */
  static async start(label: string, options: SystemOptions = {}): Promise<TestSystem> {
    const system = new TestSystem(uniquePrefixes(label));
    try {
      await system.boot(options);
    } catch (error) {
      await system.close();
      throw error;
    }
    return system;
  }

  private async boot(options: SystemOptions): Promise<void> {
    const [slackUrl, smtpUrl] = await Promise.all([this.slack.start(), this.smtp.start()]);
    // One principal directory for both services: the approvers of the approvals config, and the test requesters.
    const approvals = options.approvalEnv?.APPROVALS_CONFIG
      ? (JSON.parse(options.approvalEnv.APPROVALS_CONFIG) as { approvers?: TestApprover[] })
      : SYSTEM_APPROVALS_CONFIG;
    this.approvers = approvals.approvers ?? [];
    const directory = directoryEnv(approvals);
    const shared = {
      REDIS_URL: TEST_REDIS_URL,
      KEY_PREFIX: this.prefixes.keyPrefix,
      QUEUE_PREFIX: this.prefixes.queuePrefix,
      DECISION_SIGNING_SECRET: SYSTEM_SECRETS.DECISION_SIGNING_SECRET,
      AUDIT_SIGNING_SECRET: SYSTEM_SECRETS.AUDIT_SIGNING_SECRET,
      PRINCIPALS_CONFIG: directory.PRINCIPALS_CONFIG,
      LOG_LEVEL: 'silent',
      ...TEST_RATE_LIMITS,
    };
    const local = { port: 0, host: '127.0.0.1' };
    this.approvals = await startApprovalService(
      {
        ...shared,
        LINK_TOKEN_SECRET: SYSTEM_SECRETS.LINK_TOKEN_SECRET,
        SLACK_BOT_TOKEN: SYSTEM_SECRETS.SLACK_BOT_TOKEN,
        SLACK_SIGNING_SECRET: SYSTEM_SECRETS.SLACK_SIGNING_SECRET,
        SLACK_API_URL: slackUrl,
        SMTP_URL: smtpUrl,
        NOTIFY_BACKOFF: '50ms',
        ...options.approvalEnv,
        APPROVALS_CONFIG: directory.APPROVALS_CONFIG,
      },
      local,
    );
    for (let i = 0; i < (options.workers ?? 1); i++) {
      this.workers.push(
        await startAgentWorker(
          {
            ...shared,
            AGENTS_CONFIG: 'test/support/agents.json',
            SEED_DEMO_INFRA: 'true',
            STALLED_INTERVAL_MS: '500',
            LOCK_DURATION_MS: '2000',
            JOB_BACKOFF_MS: '50',
            ...options.workerEnv,
          },
          { ...local, runHooks: runHooksFrom(options.workerEnv ?? {}) },
        ),
      );
    }
  }

  /** The bearer header of a principal of this system (an approver's own token, else the default test token). */
  bearer(id: string): { Authorization: string } {
    const token = this.approvers.find((a) => a.id === id)?.apiToken ?? testToken(id);
    return { Authorization: `Bearer ${token}` };
  }

  get workerUrl(): string {
    return this.workers[0].url;
  }

  get approvalUrl(): string {
    return this.approvals.url;
  }

  /** Stops everything this system started and deletes its keys (never FLUSHALL: the server is shared). */
  async close(): Promise<void> {
    await Promise.allSettled(this.workers.map((w) => w.close()));
    await this.approvals?.close().catch(() => undefined);
    await Promise.allSettled([this.slack.stop(), this.smtp.stop()]);
    await deletePrefixedKeys(this.prefixes);
  }

  // ---- the agent worker's side --------------------------------------------------------------------

  /** Starts a run as `as` (its requester; default alice). */
  async startRun(
    script: StartRunBody['script'],
    body: Partial<StartRunBody> = {},
    as = 'alice',
  ): Promise<string> {
    const response = await fetch(`${this.workerUrl}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...this.bearer(as) },
      body: JSON.stringify({ agent: 'ops', input: 'run the runbook', script, ...body }),
    });
    const answer = (await response.json()) as { runId?: string };
    if (response.status !== 202 || !answer.runId)
      throw new Error(`POST /runs answered ${response.status}: ${JSON.stringify(answer)}`);
    return answer.runId;
  }

  /** The run as `as` reads it (default alice, who starts the runs of these tests). */
  async run(runId: string, as = 'alice'): Promise<RunView> {
    return (await (
      await fetch(`${this.workerUrl}/runs/${runId}`, { headers: this.bearer(as) })
    ).json()) as RunView;
  }

  waitForStatus(runId: string, status: RunStatus, timeoutMs = 15_000, as = 'alice'): Promise<RunView> {
    return waitFor(
      async () => {
        const view = await this.run(runId, as);
        return view.status === status ? view : undefined;
      },
      `run ${runId} ${status}`,
      timeoutMs,
    );
  }

  /** The run parked, with its first pending call. */
  async waitForPendingCall(runId: string, as = 'alice'): Promise<PendingCall> {
    const view = await waitFor(async () => {
      const v = await this.run(runId, as);
      return v.status === 'awaiting_confirmation' && v.pending.length ? v : undefined;
    }, `run ${runId} awaiting confirmation`);
    return view.pending[0];
  }

  async infra(): Promise<InfraView> {
    return (await (
      await fetch(`${this.workerUrl}/demo/infra`, { headers: this.bearer('alice') })
    ).json()) as InfraView;
  }

  async service(name: string): Promise<InfraView['services'][number]> {
    const service = (await this.infra()).services.find((s) => s.name === name);
    if (!service) throw new Error(`no service ${name} on /demo/infra`);
    return service;
  }

  // ---- the approval service's side ----------------------------------------------------------------

  /** A call to the approval service's API as principal `as` (an approver of this system, or a default test principal). */
  async api<T = unknown>(
    method: string,
    path: string,
    as = 'bob',
    body?: unknown,
  ): Promise<{ status: number; json: T }> {
    const res = await fetch(`${this.approvalUrl}${path}`, {
      method,
      headers: {
        ...this.bearer(as),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as T };
  }

  /** The request as the approval service shows it, once it has taken it off the queue. */
  waitForApproval(callId: string, as = 'bob'): Promise<ApprovalView> {
    return waitFor(async () => {
      const { status, json } = await this.api<ApprovalView>('GET', `/approvals/${callId}`, as);
      return status === 200 ? json : undefined;
    }, `approval request ${callId}`);
  }

  /** GET /audit (one page) as `as`: an approver sees the entries of requests routed to them; `auditor` sees all. */
  async audit(filter: { runId?: string; callId?: string }, as = 'bob'): Promise<AuditEntry[]> {
    const query = new URLSearchParams(filter as Record<string, string>).toString();
    const res = await fetch(`${this.approvalUrl}/audit?${query}`, { headers: this.bearer(as) });
    if (res.status !== 200) throw new Error(`GET /audit answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as AuditEntry[];
  }

  /** Waits for an audit entry of `type` about the call (audit appends may trail the HTTP answer), read as `as`. */
  waitForAudit(callId: string, type: AuditEntry['type'], as = 'bob'): Promise<AuditEntry> {
    return waitFor(
      async () => (await this.audit({ callId }, as)).find((e) => e.type === type),
      `audit ${type} for ${callId}`,
    );
  }

  // ---- channels -----------------------------------------------------------------------------------

  /**
   * Clicks Approve/Deny in Slack as `approver` on the newest message about the call: a block_actions interaction
   * signed like Slack signs it, with the value its button carries (the request and attempt it was posted for). `rev`:
   * click as if the button showed this revision of edited arguments (Slack updates the message's buttons after an
   * edit; 0: as the agent asked).
   */
  async slackClick(
    callId: string,
    approver: SystemApprover | { slackUserId: string },
    action: 'approve' | 'deny' | 'respond',
    { rev }: { rev?: number } = {},
  ) {
    const posted = await waitFor(
      () =>
        this.slack
          .find('chat.postMessage', callId)
          .filter((c) => c.reply?.ok)
          .at(-1),
      `Slack message for ${callId}`,
    );
    const blocks = posted.body.blocks as {
      type: string;
      elements?: { action_id: string; value: string }[];
    }[];
    const button = blocks
      .find((b) => b.type === 'actions')
      ?.elements?.find((e) => e.action_id === `countersign_${action}`);
    if (!button) throw new Error(`the Slack message for ${callId} has no ${action} button`);
    const payload = {
      type: 'block_actions',
      user: {
        id: typeof approver === 'string' ? SYSTEM_APPROVERS[approver].slackUserId : approver.slackUserId,
      },
      channel: { id: posted.reply?.channel },
      message: { ts: posted.reply?.ts },
      // Slack's own, unique per click: two clicks of one button are two requests, not a replay.
      trigger_id: `${Date.now()}.${Math.random().toString(36).slice(2)}`,
      actions: [
        { action_id: button.action_id, value: rev === undefined ? button.value : withRev(button.value, rev) },
      ],
    };
    return this.slackInteraction(payload);
  }

  /**
   * Submits the respond modal that a Respond click opened (the newest views.open the Slack stand-in got) as `approver`,
   * with `text` typed in: a view_submission signed like Slack signs it, carrying the modal's own private_metadata.
   */
  async slackSubmitRespond(approver: SystemApprover | { slackUserId: string }, text: string) {
    const opened = await waitFor(
      () => this.slack.calls.filter((c) => c.method === 'views.open').at(-1),
      'views.open',
    );
    const view = opened.body.view as { callback_id: string; private_metadata: string };
    return this.slackInteraction({
      type: 'view_submission',
      user: {
        id: typeof approver === 'string' ? SYSTEM_APPROVERS[approver].slackUserId : approver.slackUserId,
      },
      view: {
        id: `V${Date.now()}`,
        callback_id: view.callback_id,
        private_metadata: view.private_metadata,
        state: { values: { response: { text: { type: 'plain_text_input', value: text } } } },
      },
    });
  }

  /** POSTs one interaction payload to the approval service, signed like Slack signs it. */
  private async slackInteraction(payload: Record<string, unknown>) {
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const res = await fetch(`${this.approvalUrl}/slack/interactions`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Slack-Request-Timestamp': timestamp,
        'X-Slack-Signature': slackSignature(SYSTEM_SECRETS.SLACK_SIGNING_SECRET, timestamp, body),
      },
      body,
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  /** The mail to `approver` about the call, with its approval link (the link's token is bound to the call). */
  async mailTo(approver: string, callId: string): Promise<{ mail: CapturedMail; link: string }> {
    const email = this.approvers.find((a) => a.id === approver)?.email ?? `${approver}@example.test`;
    const mail = await waitFor(
      () => this.smtp.to(email).find((m) => linkCallId(linkIn(m.text)) === callId),
      `mail to ${approver} about ${callId}`,
    );
    return { mail, link: linkIn(mail.text)! };
  }
}

export function linkIn(mailText: string): string | undefined {
  return /https?:\/\/[^\s"<>]+\/approve\/[A-Za-z0-9_.-]+/.exec(mailText)?.[0];
}

/** The call ID a link's token is bound to (its payload is readable; only the signature is secret). */
export function linkCallId(link: string | undefined): string | undefined {
  const payload = link?.split('/approve/')[1]?.split('.')[0];
  if (!payload) return undefined;
  try {
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { c?: string }).c;
  } catch {
    return undefined;
  }
}

/** One confirm-tier call, then a final text: the smallest run that parks and resumes. */
export function restartScript(service: string): StartRunBody['script'] {
  return [{ toolCalls: [{ name: 'restart_service', args: { service } }] }, { text: `restarted ${service}` }];
}

/** A Slack button value (`<requestId>|<attempt>[|<rev>]`) for another revision of the arguments. */
function withRev(value: string, rev: number): string {
  const [requestId, attempt] = value.split('|');
  return rev === 0 ? `${requestId}|${attempt}` : `${requestId}|${attempt}|${rev}`;
}
