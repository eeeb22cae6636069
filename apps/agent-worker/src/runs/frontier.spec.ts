import { CallState } from '@countersign/call-ledger';
import { type FrontierCall, type ParkedCallBody } from './run-state';
import { manualStepBody, reasked, toFrontierCall, toolMessages } from './frontier';

const body = (id: string, position: number): ParkedCallBody => ({
  id,
  name: 'restart_service',
  args: { service: 'api' },
  tier: 'confirm',
  fingerprint: 'f'.repeat(64),
  definitionHash: 'd'.repeat(64),
  attempt: 0,
  reason: 'confirmation_required',
  position,
});

describe('frontier helpers', () => {
  it('returns tool messages in the order the frontier holds them', () => {
    const frontier: FrontierCall[] = [
      { body: body('a', 0), state: CallState.Done, result: { outcome: 'executed', content: 'A' } },
      { body: body('b', 1), state: CallState.Done, result: { outcome: 'denied', content: 'B' } },
    ];
    expect(toolMessages(frontier)).toEqual([
      { role: 'tool', toolCallId: 'a', name: 'restart_service', content: 'A' },
      { role: 'tool', toolCallId: 'b', name: 'restart_service', content: 'B' },
    ]);
  });

  it('parks a pending call with the parsed arguments, fingerprint and definition hash the pipeline returned', () => {
    const call = toFrontierCall({ id: 'c', name: 'restart_service', args: { service: 'api', extra: 1 } }, 2, {
      kind: 'pending_confirmation',
      callId: 'c',
      toolName: 'restart_service',
      args: { service: 'api' },
      tier: 'confirm',
      fingerprint: 'a'.repeat(64),
      definitionHash: 'b'.repeat(64),
      content: 'waiting',
    });
    expect(call).toEqual({
      state: 'pending',
      body: expect.objectContaining({
        args: { service: 'api' },
        fingerprint: 'a'.repeat(64),
        definitionHash: 'b'.repeat(64),
        position: 2,
        attempt: 0,
      }),
    });
  });

  it('keeps what the model is told for a call that did not wait', () => {
    const call = toFrontierCall({ id: 'c', name: 'x', args: {} }, 0, {
      kind: 'error',
      callId: 'c',
      toolName: 'x',
      message: 'm',
      content: 'Unknown tool',
    });
    expect(call).toMatchObject({ state: 'done', result: { outcome: 'error', content: 'Unknown tool' } });
  });

  it('asks again with the next attempt, the reason and a request of its own', () => {
    const first = { ...body('c', 0), requestId: 'r-first' };
    const again = reasked(first, 'interrupted');
    expect(again).toMatchObject({ attempt: 1, reason: 'interrupted', id: 'c' });
    expect(again.requestId).not.toBe('r-first');
  });

  it('gives every parked call a request of its own, whatever call ID the model chose', () => {
    const waiting = {
      kind: 'pending_confirmation' as const,
      callId: 'c',
      toolName: 'restart_service',
      args: { service: 'api' },
      tier: 'confirm' as const,
      fingerprint: 'a'.repeat(64),
      definitionHash: 'b'.repeat(64),
      content: 'waiting',
    };
    const call = { id: 'c', name: 'restart_service', args: { service: 'api' } };
    const ids = Array.from({ length: 50 }, () => toFrontierCall(call, 0, waiting).body.requestId);
    expect(new Set(ids).size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^r[A-Za-z0-9_-]{16}$/);
  });

  it('names a manual-step notice after its run, turn and call, so a turn played again sends the same one', () => {
    const call = { id: 'c', name: 'drop_database', args: {} };
    const notice = (runId: string, turn: number) =>
      manualStepBody({ runId }, turn, call, {}, 'f', 'd').requestId;
    expect(notice('run-1', 2)).toBe(notice('run-1', 2));
    expect(new Set([notice('run-1', 2), notice('run-1', 3), notice('run-2', 2)]).size).toBe(3);
  });
});
