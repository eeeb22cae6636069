// Rate limits per principal and per source address (issue 11, finding 6), through real listening services, with the
// counters in the real Redis: run starts on the agent worker; decisions, Slack interactions and sign-ins on the
// approval service. Every window is a minute, so no test waits for one to end.
import { startApprovalService, type RunningApprovalService } from '../apps/approval-service/src/bootstrap';
import { countTrips, monitorCommands } from '../bench/support/trips';
import { approvalServiceEnv } from './support/approval-harness';
import { WorkerHarness } from './support/agent-worker-harness';
import { signInForm } from './support/inbox-session';
import { approvalsConfig } from './support/fixtures';
import { bearer, testToken } from './support/principals';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from './support/redis';

jest.setTimeout(60_000);

const RUN = { agent: 'ops', input: 'hello', script: [{ text: 'done' }] };

interface Answer {
  status: number;
  retryAfter: string | null;
  message?: string;
}

async function send(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init);
  const body = (await res.json().catch(() => undefined)) as { message?: unknown } | undefined;
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    message: typeof body?.message === 'string' ? body.message : undefined,
  };
}

function startRun(workerUrl: string, headers: Record<string, string>, body: object = RUN): Promise<Answer> {
  return send(`${workerUrl}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** `n` requests one after the other (the counts are then exact). */
async function times(n: number, request: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < n; i++) answers.push(await request());
  return answers;
}

const statuses = (answers: Answer[]) => answers.map((a) => a.status);

function expectRefusedWithRetryAfter(answer: Answer, windowSeconds: number): void {
  expect(answer.status).toBe(429);
  const seconds = Number(answer.retryAfter);
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(windowSeconds);
}

describe('run starts on the agent worker', () => {
  // One deployment (key and queue prefix) per test, so no test's counts reach another's.
  const deployments: WorkerHarness[] = [];
  const deployment = () => {
    const harness = new WorkerHarness('rate-runs');
    deployments.push(harness);
    return harness;
  };
  const startWorker = (env: Record<string, string>) => deployment().startWorker(env);
  afterAll(() => Promise.all(deployments.map((d) => d.cleanup())));

  it('refuses a principal past its limit with 429 and Retry-After; another principal still starts runs', async () => {
    const worker = await startWorker({
      RATE_LIMIT_RUN_STARTS: '3/1m',
      RATE_LIMIT_RUN_STARTS_ADDRESS: '100/1m',
    });
    const alice = await times(5, () => startRun(worker.url, bearer('alice')));
    expect(statuses(alice)).toEqual([202, 202, 202, 429, 429]);
    expectRefusedWithRetryAfter(alice[3], 60);
    expect(alice[3].message).toBe(
      `too many run starts by alice: at most 3/1m (RATE_LIMIT_RUN_STARTS); retry after ${alice[3].retryAfter} s`,
    );
    expect(alice[0].retryAfter).toBeNull();
    // Same address, another principal: counted apart.
    expect((await startRun(worker.url, bearer('bob'))).status).toBe(202);
  });

  it('counts a machine client under its own limit, in its own name (not the user it acts for)', async () => {
    const worker = await startWorker({
      RATE_LIMIT_RUN_STARTS: '1/1m',
      RATE_LIMIT_RUN_STARTS_MACHINE: '4/1m',
    });
    const forAlice = { ...RUN, onBehalfOf: 'alice' };
    const bot = await times(5, () => startRun(worker.url, bearer('ops-bot'), forAlice));
    expect(statuses(bot)).toEqual([202, 202, 202, 202, 429]);
    expect(bot[4].message).toContain('by ops-bot: at most 4/1m (RATE_LIMIT_RUN_STARTS_MACHINE)');
    // alice's own budget is untouched by what the bot started for her.
    expect(statuses(await times(2, () => startRun(worker.url, bearer('alice'))))).toEqual([202, 429]);
  });

  it('counts requests by source address before the credential is checked, so guessed tokens count too', async () => {
    const worker = await startWorker({
      RATE_LIMIT_RUN_STARTS_ADDRESS: '4/1m',
    });
    const guesses = await times(3, () => startRun(worker.url, { Authorization: 'Bearer guessed-token-123' }));
    const anonymous = await startRun(worker.url, {});
    expect([...statuses(guesses), anonymous.status]).toEqual([401, 401, 401, 401]);
    const refused = await startRun(worker.url, bearer('bob'));
    expectRefusedWithRetryAfter(refused, 60);
    expect(refused.message).toContain(
      'too many run starts from 127.0.0.1: at most 4/1m (RATE_LIMIT_RUN_STARTS_ADDRESS)',
    );
  });

  it('shares the counts between replicas of a deployment, and keeps deployments on one Redis apart', async () => {
    const limits = { RATE_LIMIT_RUN_STARTS: '4/1m' };
    const replicas = deployment();
    const [one, two] = [await replicas.startWorker(limits), await replicas.startWorker(limits)];
    const answers = await times(6, async () =>
      startRun([one, two][Math.floor(Math.random() * 2)].url, bearer('carol')),
    );
    expect(statuses(answers)).toEqual([202, 202, 202, 202, 429, 429]);
    expect((await startRun(one.url, bearer('carol'))).status).toBe(429);
    expect((await startRun(two.url, bearer('carol'))).status).toBe(429);
    // Another deployment (its own KEY_PREFIX) on the same Redis counts from zero.
    const other = await startWorker(limits);
    expect((await startRun(other.url, bearer('carol'))).status).toBe(202);
  });

  it('takes the client address from X-Forwarded-For only through the proxies TRUST_PROXY names', async () => {
    const limits = { RATE_LIMIT_RUN_STARTS_ADDRESS: '2/1m', RATE_LIMIT_RUN_STARTS: '100/1m' };
    const direct = await startWorker(limits);
    // Without TRUST_PROXY a client cannot pick the address it is counted under.
    const spoofed = await times(3, () =>
      startRun(direct.url, {
        ...bearer('dave'),
        'X-Forwarded-For': `198.51.100.${Math.floor(Math.random() * 250)}`,
      }),
    );
    expect(statuses(spoofed)).toEqual([202, 202, 429]);
    expect(spoofed[2].message).toContain('from 127.0.0.1');

    const proxied = await startWorker({ ...limits, TRUST_PROXY: 'loopback' });
    const from = (address: string) =>
      startRun(proxied.url, { ...bearer('dave'), 'X-Forwarded-For': address });
    expect(statuses(await times(3, () => from('203.0.113.5')))).toEqual([202, 202, 429]);
    expect((await from('203.0.113.5')).message).toContain('from 203.0.113.5');
    expect((await from('203.0.113.77')).status).toBe(202);
  });

  it('applies no limit that is set to off', async () => {
    const worker = await startWorker({
      RATE_LIMIT_RUN_STARTS: 'off',
      RATE_LIMIT_RUN_STARTS_ADDRESS: '6/1m',
    });
    expect(statuses(await times(7, () => startRun(worker.url, bearer('alice'))))).toEqual([
      202, 202, 202, 202, 202, 202, 429,
    ]);
  });
});

describe('decisions, Slack interactions and sign-ins on the approval service', () => {
  const prefixes = uniquePrefixes('rate-approvals');
  const APPROVALS = approvalsConfig({ defaults: { channels: ['web'] } });
  let service: RunningApprovalService;

  beforeAll(async () => {
    service = await startApprovalService(
      approvalServiceEnv(prefixes, APPROVALS, {
        RATE_LIMIT_DECISIONS: '3/1m',
        RATE_LIMIT_DECISIONS_ADDRESS: '10/1m',
        RATE_LIMIT_SIGN_IN: '2/1m',
        RATE_LIMIT_SIGN_IN_ADDRESS: '6/1m',
        RATE_LIMIT_SLACK_ADDRESS: '2/1m',
        SLACK_SIGNING_SECRET: 'rate-slack-signing-secret',
        TRUST_PROXY: 'loopback',
      }),
      { port: 0, host: '127.0.0.1' },
    );
  });
  afterAll(async () => {
    await service?.close();
    await deletePrefixedKeys(prefixes);
  });

  /** Each test sends from an address of its own (TRUST_PROXY=loopback), so their address counts stay apart. */
  const from = (address: string) => ({ 'X-Forwarded-For': address });

  it('limits the decisions of one approver, whatever the call; another approver still decides', async () => {
    const decide = (as: string, callId: string) =>
      send(`${service.url}/approvals/${callId}/decisions`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${testToken(as)}`,
          'content-type': 'application/json',
          ...from('192.0.2.1'),
        },
        body: JSON.stringify({ decision: 'approve' }),
      });
    // Unknown calls (404) count like any other: the limit is on decisions sent, not on decisions that counted.
    const bob = await Promise.all(['a', 'b', 'c'].map((c) => decide('bob', `call-${c}`)));
    expect(statuses(bob)).toEqual([404, 404, 404]);
    const refused = await decide('bob', 'call-d');
    expectRefusedWithRetryAfter(refused, 60);
    expect(refused.message).toContain('too many decisions by bob: at most 3/1m (RATE_LIMIT_DECISIONS)');
    expect((await decide('carol', 'call-d')).status).toBe(404);
  });

  it('counts a decision by address and by principal in one Redis round trip', async () => {
    /** One decision under MONITOR (on the shared Redis, read for this deployment's counters only): its counts' trips. */
    const countedTrips = async () => {
      const monitored = await monitorCommands(TEST_REDIS_URL);
      const startUs = Date.now() * 1000;
      let answer: Answer;
      try {
        answer = await send(`${service.url}/approvals/call-trips/decisions`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${testToken('dave')}`,
            'content-type': 'application/json',
            ...from('192.0.2.8'),
          },
          body: JSON.stringify({ decision: 'approve' }),
        });
        await new Promise((done) => setTimeout(done, 100));
      } finally {
        monitored.stop();
      }
      expect(answer.status).toBe(404);
      const counters = monitored.seen.filter((s) =>
        s.args.some((arg) => arg.startsWith(`{${prefixes.keyPrefix}:rate-limit:`)),
      );
      expect(counters.filter((s) => s.client !== 'lua').map((s) => s.args[0])).toEqual([
        `{${prefixes.keyPrefix}:rate-limit:decision:192.0.2.8:address}:hits`,
        `{${prefixes.keyPrefix}:rate-limit:decision:dave:principal}:hits`,
      ]);
      return countTrips(counters, startUs - 1_000_000, Date.now() * 1000).trips;
    };
    // The trip count reads MONITOR's clock (bench/support/trips.ts): a busy machine can pause Redis between two
    // commands of one pipeline, so the best of three decisions is taken. Counts sent one after the other's answer
    // never look like one trip (the answer has to reach the service and the next count come back).
    const trips: number[] = [];
    while (trips.length < 3 && !trips.includes(1)) trips.push(await countedTrips());
    expect(Math.min(...trips)).toBe(1);
  });

  it('answers a refused credential over its address limit with 429, not 401', async () => {
    const guess = () =>
      send(`${service.url}/approvals/call-guess/decisions`, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer guessed-token-0123456789',
          'content-type': 'application/json',
          ...from('192.0.2.9'),
        },
        body: JSON.stringify({ decision: 'approve' }),
      });
    const answers = await times(11, guess);
    expect(statuses(answers)).toEqual([...Array(10).fill(401), 429]);
    expectRefusedWithRetryAfter(answers[10], 60);
    expect(answers[10].message).toContain(
      'too many decisions from 192.0.2.9: at most 10/1m (RATE_LIMIT_DECISIONS_ADDRESS)',
    );
  });

  it('limits email-link decisions by source address (the link is the credential)', async () => {
    const post = (address: string) =>
      send(`${service.url}/approve/not-a-link-we-sent`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...from(address) },
        body: 'decision=approve',
      });
    const answers = await times(11, () => post('192.0.2.2'));
    expect(statuses(answers)).toEqual([...Array(10).fill(400), 429]);
    expectRefusedWithRetryAfter(answers[10], 60);
    expect(answers[10].message).toContain('too many decisions from 192.0.2.2');
    expect((await post('192.0.2.3')).status).toBe(400);
  });

  it('limits sign-in attempts by source address, with a valid token too', async () => {
    const signIn = async (address: string, tokenValue: string) => {
      const { csrfCookie, csrf } = await signInForm(service.url);
      return send(`${service.url}/inbox/session`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Cookie: csrfCookie,
          Origin: service.url,
          'Sec-Fetch-Site': 'same-origin',
          ...from(address),
        },
        body: new URLSearchParams({ token: tokenValue, csrf }).toString(),
      });
    };
    const guesses = await times(6, () => signIn('192.0.2.4', `guess-${Math.random()}-0123456789`));
    expect(statuses(guesses)).toEqual(Array(6).fill(401));
    const refused = await signIn('192.0.2.4', testToken('bob'));
    expectRefusedWithRetryAfter(refused, 60);
    expect(refused.message).toContain(
      'too many sign-ins from 192.0.2.4: at most 6/1m (RATE_LIMIT_SIGN_IN_ADDRESS)',
    );
    expect((await signIn('192.0.2.5', testToken('bob'))).status).toBe(303);
  });

  it('limits the one-time sign-in links a principal asks for', async () => {
    const link = (as: string) =>
      send(`${service.url}/inbox/sign-in-links`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${testToken(as)}`, ...from('192.0.2.6') },
      });
    expect(statuses(await times(3, () => link('carol')))).toEqual([201, 201, 429]);
    expect((await link('bob')).status).toBe(201);
  });

  it('limits Slack interactions by source address before their signature is checked', async () => {
    const click = () =>
      send(`${service.url}/slack/interactions`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'X-Slack-Request-Timestamp': String(Math.floor(Date.now() / 1000)),
          'X-Slack-Signature': 'v0=forged',
          ...from('192.0.2.7'),
        },
        body: 'payload=%7B%7D',
      });
    const answers = await times(3, click);
    expect(statuses(answers)).toEqual([401, 401, 429]);
    expect(answers[2].message).toContain('too many Slack interactions from 192.0.2.7');
  });
});
