// Sticky denials with plain fakes around them: which denials are kept, which calls are refused, what the model hears.
import { CallState } from '@countersign/call-ledger';
import type { AuditInput } from '@countersign/audit';
import type { RunEvent } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { AgentRuntime } from '../agents/agent-builder';
import type { WorkerMetrics } from '../core/worker-metrics';
import type { DenialScope, KeptDenial } from './denied-calls';
import type { FrontierCall, ParkedCallBody, RunRecord, StoredDecision } from './run-state';
import { denialScope, StickyDenials } from './sticky-denials';

const body = (id: string, name: string, fingerprint: string): ParkedCallBody => ({
  id,
  name,
  args: { service: 'api' },
  tier: 'confirm',
  fingerprint,
  definitionHash: 'd'.repeat(64),
  attempt: 0,
  reason: 'confirmation_required',
  position: 0,
  requestId: `r-${id}`,
});
const waiting = (id: string, name = 'restart_service', print = 'f1'): FrontierCall => ({
  body: body(id, name, print),
  state: CallState.Pending,
});
const decision = (over: Partial<StoredDecision> = {}): StoredDecision => ({
  decision: 'deny',
  decidedBy: 'person',
  reason: 'frozen',
  approvers: ['bob'],
  fingerprint: 'f1',
  decidedAt: '2026-12-04T00:00:00.000Z',
  ...over,
});
const run = { runId: 'run-1', userId: 'alice' } as RunRecord;
const agent = (stickyDenials: Record<string, unknown> = {}) =>
  ({ config: { stickyDenials } }) as unknown as AgentRuntime;

function setup() {
  const kept = new Map<string, KeptDenial>();
  const keptWith: DenialScope[] = [];
  const denied = {
    keep: async (_run: unknown, print: string, scope: DenialScope, denial: KeptDenial) => {
      kept.set(print, denial);
      keptWith.push(scope);
    },
    find: async (_run: unknown, lookups: { fingerprint: string }[]) =>
      new Map(
        lookups.flatMap((l) => (kept.has(l.fingerprint) ? [[l.fingerprint, kept.get(l.fingerprint)!]] : [])),
      ),
  };
  const audit: AuditInput[] = [];
  const events: RunEvent[] = [];
  const quiet = () => undefined;
  const sut = new StickyDenials(
    denied,
    {
      append: async (entry: AuditInput) => {
        audit.push(entry);
        return 'id';
      },
    },
    { publishOnce: (_marker: string, event: RunEvent) => void events.push(event) },
    { toolCalls: { inc: quiet } } as unknown as WorkerMetrics,
    { info: quiet, warn: quiet, debug: quiet, error: quiet } as unknown as Logger,
  );
  return { sut, kept, keptWith, audit, events };
}

describe('StickyDenials', () => {
  it.each([
    ['a tool not listed', 'restart_service', {}, { kind: 'run' }],
    ['`run`', 'restart_service', { restart_service: 'run' }, { kind: 'run' }],
    ['`off`', 'restart_service', { restart_service: 'off' }, undefined],
    [
      'a requester window',
      'restart_service',
      { restart_service: { scope: 'requester', windowSeconds: 60 } },
      { kind: 'requester', windowSeconds: 60 },
    ],
    ['a tool named like an Object.prototype member', 'constructor', {}, { kind: 'run' }],
  ])('reads the scope of %s', (_case, name, config, scope) => {
    expect(denialScope(agent(config), name)).toEqual(scope);
  });

  it.each([
    ['an expiry', decision({ decidedBy: 'expired' })],
    ['a refusal by policy', decision({ decidedBy: 'policy' })],
    ['no route', decision({ decidedBy: 'no_route' })],
    ['an approval', decision({ decision: 'approve' })],
    // A response is guidance, not a no: the same call asked again is asked about again.
    ['a person’s response', decision({ decision: 'respond', response: 'canary first' })],
  ])('keeps a person’s denial only, not %s', async (_case, other) => {
    const { sut, kept } = setup();
    await sut.keep(run, agent(), { ...waiting('c1'), state: CallState.Denied, decision: other });
    expect(kept.size).toBe(0);
  });

  it('refuses a waiting call denied before, tells the model who and why, and audits which decision it repeats', async () => {
    const { sut, audit, events } = setup();
    await sut.keep(run, agent(), { ...waiting('c1'), state: CallState.Denied, decision: decision() });
    const frontier = await sut.refuseRepeats(
      run,
      agent(),
      [waiting('c2'), waiting('c3', 'restart_service', 'other')],
      2,
      (turn, id) => `${turn}:${id}`,
    );
    expect(frontier.map((c) => [c.body.id, c.state, c.body.requestId])).toEqual([
      ['c2', CallState.Done, undefined],
      ['c3', CallState.Pending, 'r-c3'],
    ]);
    expect(frontier[0].result?.content).toBe(
      'Tool "restart_service" was not run and nobody was asked again: the same call (same arguments) was already ' +
        'denied earlier in this run by bob. Reason: frozen. Do not ask for it again with the same arguments.',
    );
    expect(audit).toEqual([
      expect.objectContaining({
        type: 'tool.denied',
        callId: 'c2',
        actor: 'agent-worker',
        detail: expect.objectContaining({
          automatic: true,
          repeats: expect.objectContaining({ callId: 'c1' }),
        }),
      }),
    ]);
    expect(events).toEqual([
      expect.objectContaining({ type: 'tool_result', callId: 'c2', outcome: 'denied' }),
    ]);
  });

  it('asks again about a tool whose denials do not stick', async () => {
    const { sut, kept } = setup();
    kept.set('f1', { runId: 'run-1', callId: 'c1', approvers: ['bob'], decidedAt: 'x' });
    const frontier = [waiting('c2')];
    expect(await sut.refuseRepeats(run, agent({ restart_service: 'off' }), frontier, 2, String)).toBe(
      frontier,
    );
  });
});
