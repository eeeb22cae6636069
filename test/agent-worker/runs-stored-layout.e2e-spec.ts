// Runs parked by an earlier version stay readable: the run hash as the worker stored it before the run store moved onto
// the call ledger (fields and bytes copied from a run parked by commit 135004c) resumes on today's worker and runs its
// approved call exactly once; and a run parked today is stored in the same bytes.
import { fingerprint } from '@countersign/authorization';
import { AgentCatalog } from '../../apps/agent-worker/src/agents/agent-catalog';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { runKey } from '../../apps/agent-worker/src/runs/run-keys';
import { WorkerHarness } from '../support/agent-worker-harness';

jest.setTimeout(30_000);

const SCRIPT = [
  {
    toolCalls: [
      { id: 'call-a', name: 'get_service_status', args: { service: 'api' } },
      { id: 'call-b', name: 'restart_service', args: { service: 'web' } },
    ],
  },
  { text: 'restarted' },
];
const STATUS = '{"name":"api","status":"healthy","replicas":3,"restarts":0}';
const MESSAGES = [
  { role: 'user', content: 'please help' },
  { role: 'assistant', content: null, toolCalls: SCRIPT[0].toolCalls },
];

/** The parked run's call fields as 135004c stored them, byte for byte; `defHash` is the tool's definition. */
function storedCalls(defHash: string, requestId: string): Record<string, string> {
  const fp = fingerprint('restart_service', { service: 'web' });
  return {
    'c:call-a': '{"name":"get_service_status","args":{"service":"api"},"fp":"","defHash":"","tier":"auto"}',
    'c:call-a:s': 'done',
    'c:call-a:r': JSON.stringify({ outcome: 'executed', content: STATUS }),
    'c:call-b': `{"name":"restart_service","args":{"service":"web"},"fp":"${fp}","defHash":"${defHash}","rq":"${requestId}","i":1}`,
    'c:call-b:s': 'pending',
  };
}

describe('a run stored by an earlier version', () => {
  const h = new WorkerHarness('stored-layout');
  let worker: RunningAgentWorker;
  let defHash: string;

  beforeAll(async () => {
    worker = await h.startWorker();
    defHash = worker.app.get(AgentCatalog).get('ops')!.registry.get('restart_service')!.definitionHash;
  });
  afterAll(() => h.cleanup());

  it('resumes on the approval of its parked call and runs that call exactly once', async () => {
    const runId = 'run-parked-by-135004c';
    const requestId = 'rBeoXIyaHeOp3ysBE';
    await h.redis.hset(runKey(h.prefixes.keyPrefix, runId), {
      agent: 'ops',
      userId: 'alice',
      status: 'awaiting_confirmation',
      parkedBy: '',
      messages: JSON.stringify(MESSAGES),
      script: '[null,{"text":"restarted"}]',
      e: '0',
      ...storedCalls(defHash, requestId),
    });
    const [pending] = await h.waitForPending(worker.url, runId);
    expect(pending).toEqual({
      callId: 'call-b',
      requestId,
      toolName: 'restart_service',
      args: { service: 'web' },
      tier: 'confirm',
      fingerprint: fingerprint('restart_service', { service: 'web' }),
    });
    const before = await h.restarts(worker.url, 'web');

    const decision = h.decision(runId, pending, 'approve');
    await h.settled(await h.publishDecision(decision));
    await h.settled(await h.publishDecision(decision, 'the-same-decision-again'));
    const done = await h.waitForStatus(worker.url, runId, 'completed');

    expect(done.result).toBe('restarted');
    expect(await h.restarts(worker.url, 'web')).toBe(before + 1);
    const executed = (await h.audit.read({ runId })).filter((e) => e.type === 'tool.executed');
    expect(executed.map((e) => e.callId)).toEqual(['call-b']);
    // The call that ran before the park is not run again: its stored result goes to the model.
    expect(done.messages.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', toolCallId: 'call-a', name: 'get_service_status', content: STATUS },
      expect.objectContaining({ toolCallId: 'call-b', name: 'restart_service' }),
    ]);
  });

  it('is stored today in the same bytes', async () => {
    const runId = await h.startRun(worker.url, { script: SCRIPT });
    const [pending] = await h.waitForPending(worker.url, runId);
    const stored = await h.redis.hgetall(runKey(h.prefixes.keyPrefix, runId));
    const calls = Object.fromEntries(Object.entries(stored).filter(([field]) => field.startsWith('c:')));
    const expected = storedCalls(defHash, pending.requestId!);
    // The status read is the infra's at the time: compare its result as stored, the rest byte for byte.
    expect(Object.keys(calls).sort()).toEqual(Object.keys(expected).sort());
    for (const field of ['c:call-a', 'c:call-a:s', 'c:call-b', 'c:call-b:s'])
      expect([field, calls[field]]).toEqual([field, expected[field]]);
    expect(JSON.parse(calls['c:call-a:r'])).toMatchObject({ outcome: 'executed' });
    expect(stored).toMatchObject({
      parkedBy: '',
      status: 'awaiting_confirmation',
      script: '[null,{"text":"restarted"}]',
    });
  });
});
