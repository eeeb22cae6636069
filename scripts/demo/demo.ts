// `npm run demo`: Redis (found or started), the approval service and an agent worker in this process, a mail
// catcher, and the payments-failover runbook (config/runbooks). Prints where to decide as each request arrives, follows
// the run as it parks and resumes, and ends with a summary. Non-interactive mode lets a stand-in decide.
import { randomBytes } from 'node:crypto';
import type { ApprovalView, PendingCall, RunEvent } from '@countersign/contracts';
import { loadApprovalServiceConfig } from '../../apps/approval-service/src/config/approval-service.config';
import { WorkerClient } from '../../apps/cli/src/client/worker-client';
import { callText, compact } from '../../apps/cli/src/render';
import { Approvers, decideAsStandIn, demoToken } from './approver-stand-in';
import { deleteKeys, startLocalServices } from './local-services';
import type { MailCatcher } from './mail-catcher';
import { EXPECTED_SUMMARY, REQUESTER, RUNBOOK, STAND_IN_DECISIONS } from './runbook';
import { printSummary, runAudit, summarize, type Summary } from './summary';

export interface DemoOptions {
  /** A stand-in decides (CI); otherwise a person decides in the inbox, an email link or the CLI. */
  autoApprove: boolean;
  redisUrl: string;
  workerPort: number;
  approvalPort: number;
  /** The environment the services start from (secrets, SMTP_*, SLACK_*, LOG_LEVEL ... pass through). */
  env: Record<string, string | undefined>;
  say: (line: string) => void;
  signal?: AbortSignal;
}

/** Runs the demo; resolves to the exit code (0 = the expected summary, or a completed run when a person decided). */
export async function runDemo(options: DemoOptions): Promise<number> {
  const { say } = options;
  const started = Date.now();
  const log = (line: string) => say(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${line}`);
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    // ---- infrastructure ------------------------------------------------------------------------
    // A fresh key/queue prefix per demo: the simulated infrastructure starts degraded every time, and the
    // demo can delete exactly its own keys at the end on a shared Redis.
    const id = `demo-${randomBytes(3).toString('hex')}`;
    const services = await startLocalServices({
      redisUrl: options.redisUrl,
      workerPort: options.workerPort,
      approvalPort: options.approvalPort,
      env: options.env,
      keyPrefix: id,
      logLevel: 'error',
    });
    const { redis, worker, approval, catcher, serviceEnv } = services;
    if (!redis.started) cleanup.push(() => deleteKeys(redis.url, id));
    cleanup.push(() => services.stop());
    log(redis.started ? `started redis-server for the demo on ${redis.url}` : `using Redis on ${redis.url}`);
    if (catcher)
      log(
        `mail catcher (local SMTP): every approval email is kept, its link printed here; read them at ${catcher.viewerUrl}`,
      );
    log(`agent worker      ${worker.url}   (POST /runs, GET /runs/:id/events, GET /demo/infra)`);
    log(`approval service  ${approval.url}   (/inbox, /approvals, /audit, /docs)`);
    log(`ops MCP server    ${services.ops.url}   (the ops agent's tools; the worker calls them over MCP)`);

    const config = loadApprovalServiceConfig(serviceEnv);
    const approvers = new Approvers(config, approval.url);
    const observer = approvers.observer;
    const inbox = (await approvers.as(observer).signInLink()).url;
    log(`web inbox: ${inbox}   (one-time sign-in link for ${observer}, valid 5 minutes)`);
    log(
      `           another one: npx countersign inbox-link --approval-url ${approval.url} --token ${approvers.tokenOf(observer)}`,
    );
    log(
      options.autoApprove
        ? 'mode: non-interactive — an approver stand-in decides as the runbook says (approve the restart, deny the scale, pass the gate)'
        : 'mode: interactive — decide each request in the inbox, by email link, or with `countersign approve|deny <requestId>`',
    );

    // ---- the run -------------------------------------------------------------------------------
    const workerClient = new WorkerClient(worker.url, demoToken(config, REQUESTER));
    const runId = await workerClient.startRunbook(RUNBOOK.name, RUNBOOK.input);
    log(`▶ ${REQUESTER} started run ${runId}: runbook ${RUNBOOK.name} ${JSON.stringify(RUNBOOK.input)}`);

    const onConfirmation = async (call: PendingCall) => {
      const view = await waitForApproval(approvers, observer, call.callId);
      const votes = view.quorum > 1 ? `, needs ${view.quorum} approvers` : '';
      const step = view.request.context?.step ? ` (${view.request.context.step})` : '';
      log(
        `  ✋ approval request ${view.request.requestId} for call ${call.callId}${step}: routed to ${view.groups.join(', ')}${votes}`,
      );
      log(`     inbox: ${approval.url}/inbox`);
      const links = catcher ? await mailLinks(catcher, call.callId, approvers.eligible(view).length) : [];
      for (const { to, link } of links) {
        log(`     email to ${to}: ${link}`);
      }
      // One command per approver the request needs (its quorum), by request ID: call IDs repeat across runs.
      for (const who of approvers.eligible(view).slice(0, view.quorum)) {
        log(
          `     CLI (${who}): npx countersign approve ${view.request.requestId} --approval-url ${approval.url} --token ${approvers.tokenOf(who)}`,
        );
      }
      if (!options.autoApprove) {
        log('     waiting for a person to decide …');
        return;
      }
      const wanted = STAND_IN_DECISIONS[call.toolName] ?? { decision: 'deny', reason: 'not in the runbook' };
      for (const vote of await decideAsStandIn(approvers, view, wanted)) {
        log(
          `  🤖 stand-in ${vote.approver} → ${vote.decision}${wanted.reason ? ` ("${wanted.reason}")` : ''}: ${vote.result}`,
        );
      }
    };

    let status = 'queued';
    for await (const event of workerClient.follow(runId, options.signal)) {
      if (event.type === 'status' && event.status !== status) {
        log(statusLine(status, event.status));
        status = event.status;
      } else if (event.type === 'tool_confirmation') {
        log(`⏸ ${callText(event.call)} needs confirmation (tier ${event.call.tier})`);
        if (status !== 'awaiting_confirmation') log(statusLine(status, (status = 'awaiting_confirmation')));
        await onConfirmation(event.call);
      } else if (event.type === 'tool_result') {
        log(resultLine(event));
      } else if (event.type === 'node') {
        log(`◆ step ${event.node}: ${event.status}`);
      } else if (event.type === 'done') {
        log(`■ run ${event.status}${event.result ? `: ${event.result}` : ''}`);
      }
    }
    if (options.signal?.aborted) return 130;

    // ---- summary -------------------------------------------------------------------------------
    const reader = approvers.as(observer);
    const run = await workerClient.run(runId);
    let summary: Summary | undefined;
    for (let i = 0; i < 100 && !summary; i++) {
      summary = summarize(run, await runAudit(reader, runId));
      if (!summary) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    summary ??= summarize(run, await runAudit(reader, runId), true)!;
    const infra = await workerClient.infra();
    const chain = await reader.verifyAudit();
    printSummary(say, runId, summary, infra, chain);

    if (!options.autoApprove) return run.status === 'completed' ? 0 : 1;
    const problems = checkExpected(summary, infra, chain.intact);
    if (problems.length) {
      say(`✘ The demo did not end as expected:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
      return 1;
    }
    say('✔ The demo ended as expected.');
    return 0;
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

function statusLine(from: string, to: string): string {
  if (to === 'awaiting_confirmation') return '⏸ run parked in Redis: waiting for a decision';
  if (to === 'running' && from === 'awaiting_confirmation')
    return '▶ run resumed: every pending call is decided';
  return `… run ${to}`;
}

function resultLine(event: Extract<RunEvent, { type: 'tool_result' }>): string {
  const mark = { executed: '✓', denied: '✗', manual_required: '⚠' }[event.outcome] ?? '•';
  return `${mark} ${event.toolName} ${event.outcome.replace('_', ' ')}: ${compact(event.content, 140)}`;
}

/** The request reaches the approval service through the queue a moment after the run parks. */
async function waitForApproval(
  approvers: Approvers,
  observer: string,
  callId: string,
): Promise<ApprovalView> {
  for (let i = 0; ; i++) {
    const view = await approvers.as(observer).get(callId);
    if (view) return view;
    if (i > 200) throw new Error(`approval request ${callId} never reached the approval service`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The emailed links for a call, once the mails to every eligible approver arrived (or after a few seconds). */
async function mailLinks(catcher: MailCatcher, callId: string, expected: number) {
  for (let i = 0; i < 60 && catcher.linksFor(callId).length < expected; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return catcher.linksFor(callId);
}

export function checkExpected(
  summary: Summary,
  infra: { services: { name: string; restarts: number; replicas: number }[]; volumes: { name: string }[] },
  chainIntact: boolean,
): string[] {
  const problems: string[] = [];
  if (summary.status !== 'completed') problems.push(`the run ended ${summary.status}`);
  for (const section of ['ran', 'refused', 'needsPerson'] as const) {
    const got = summary[section].map((i) => i.toolName);
    if (JSON.stringify(got) !== JSON.stringify(EXPECTED_SUMMARY[section]))
      problems.push(
        `${section}: expected ${EXPECTED_SUMMARY[section].join(', ')}, got ${got.join(', ') || 'nothing'}`,
      );
  }
  const payments = infra.services.find((s) => s.name === 'payments');
  if (payments?.restarts !== 1)
    problems.push(`payments should have been restarted once (${payments?.restarts})`);
  if (payments?.replicas !== 2)
    problems.push(`payments should still have 2 replicas (${payments?.replicas})`);
  if (!infra.volumes.some((v) => v.name === 'scratch')) problems.push('the scratch volume was deleted');
  if (!chainIntact) problems.push('an audit hash chain is broken');
  return problems;
}
