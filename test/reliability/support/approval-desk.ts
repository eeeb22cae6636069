// The approval service in a reliability scenario: started in-process for a deployment, and Bob deciding
// through its HTTP API what it lists as pending (the API-level counterpart of the queue-level DecisionDesk).
import type { ApprovalView } from '@countersign/contracts';
import {
  startApprovalService,
  type RunningApprovalService,
} from '../../../apps/approval-service/src/bootstrap';
import { TEST_SECRET } from '../../support/agent-worker-harness';
import { bearer } from '../../support/principals';
import { SYSTEM_APPROVALS_CONFIG, SYSTEM_SECRETS } from '../../support/system';
import { unitHash, type Verdict } from './decision-desk';
import type { Deployment } from './deployment';
import type { ScenarioTally } from './scenario-tally';

/** The deployment's principal directory is the default test one (workerEnv): bob with his test token. */
const BOB = bearer('bob');

/** An approval service on the deployment's Redis and prefixes: web channel only, 30 min expiry; `extraEnv` overrides. */
export function startApprovalServiceFor(
  deployment: Deployment,
  extraEnv: Record<string, string> = {},
): Promise<RunningApprovalService> {
  return startApprovalService(
    deployment.env({
      DECISION_SIGNING_SECRET: TEST_SECRET,
      LINK_TOKEN_SECRET: SYSTEM_SECRETS.LINK_TOKEN_SECRET,
      APPROVALS_CONFIG: JSON.stringify({
        groups: SYSTEM_APPROVALS_CONFIG.groups,
        defaultGroup: SYSTEM_APPROVALS_CONFIG.defaultGroup,
        defaults: { channels: ['web'], expiresIn: '30m' },
      }),
      LOG_LEVEL: 'warn',
      ...(deployment.approvalShards > 1 ? { APPROVAL_SHARDS: String(deployment.approvalShards) } : {}),
      ...extraEnv,
    }),
    { port: 0, host: '127.0.0.1' },
  );
}

/** What the approval service lists as pending (or another status), as Bob sees it (one page of up to 500). */
export async function pendingApprovals(
  approvalsUrl: string,
  status: 'pending' | 'decided' = 'pending',
): Promise<ApprovalView[]> {
  const res = await fetch(`${approvalsUrl}/approvals?status=${status}&limit=500`, { headers: BOB });
  if (!res.ok) throw new Error(`GET /approvals answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as ApprovalView[];
}

export interface ApiDeskOptions {
  /** Share of calls voted on twice in the same round, the second vote at a random position (default 0). */
  duplicateShare?: number;
  /** Give up when no run finished for this long (checkRuns then counts the rest as lost). */
  stallMs?: number;
}

/**
 * Bob decides whatever is pending, in random order, some twice, until every run finished. A vote on a request
 * he already decided must be refused with 409 (counted as refused as expected); a second 200 for one request
 * is counted as executed wrongly. Requests are named by request ID (a call asked again is a new request). Stops early when no run finished for `stallMs` (default 60 s), so a lost
 * request shows up as a lost run instead of the scenario spinning until the test times out.
 */
export async function decideAllThroughApi(
  approvalsUrl: string,
  deployment: Deployment,
  runIds: string[],
  verdict: (request: ApprovalView['request']) => Verdict,
  tally: ScenarioTally,
  { duplicateShare = 0, stallMs = 60_000 }: ApiDeskOptions = {},
): Promise<void> {
  const decided = new Set<string>();
  const accepted = new Set<string>();
  let best = -1;
  let lastProgress = Date.now();
  for (;;) {
    const states = await deployment.runStates(runIds);
    const done = states.filter((s) => s.status === 'completed' || s.status === 'failed').length;
    if (done === runIds.length) return;
    if (done > best) [best, lastProgress] = [done, Date.now()];
    if (Date.now() - lastProgress > stallMs) return;
    const pending = await pendingApprovals(approvalsUrl);
    const twice = pending.filter((p) => unitHash(`api-dup:${p.request.callId}`) < duplicateShare);
    const votes = [...pending, ...twice].sort(() => Math.random() - 0.5);
    for (const p of votes) {
      const { callId, requestId } = p.request;
      const again = decided.has(requestId);
      const vote = await fetch(`${approvalsUrl}/approvals/${requestId}/decisions`, {
        method: 'POST',
        headers: { ...BOB, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: verdict(p.request) }),
      });
      if (again && vote.status === 409) tally.refusedAsExpected();
      if (vote.status === 200 && accepted.has(requestId))
        tally.wronglyExecuted(`${callId}: a second vote by the same approver decided it again`);
      if (vote.status === 200) accepted.add(requestId);
      decided.add(requestId);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
