import {
  type ConfirmationHandler,
  type ConfirmationRequest,
  consultHandler,
  DEFAULT_CONFIRMATION_TIMEOUT_MS,
} from './confirmation-handler';

const request: ConfirmationRequest = {
  runId: 'run-1',
  agent: 'ops',
  userId: 'alice',
  scopes: [],
  callId: 'call-1',
  toolName: 'restart_service',
  args: { service: 'api' },
  fingerprint: 'f'.repeat(64),
};

describe('consultHandler', () => {
  afterEach(() => jest.useRealTimers());

  it.each<[string, ConfirmationHandler, object]>([
    ['returns approve', () => ({ decision: 'approve' }), { decision: 'approve' }],
    [
      'returns deny with its reason',
      async () => ({ decision: 'deny', reason: 'weekend' }),
      { decision: 'deny', reason: 'weekend' },
    ],
    ['returns ask', () => ({ decision: 'ask' }), { decision: 'ask' }],
  ])('%s', async (_case, handler, expected) => {
    await expect(consultHandler(handler, request, 1_000)).resolves.toEqual(expected);
  });

  it.each<[string, ConfirmationHandler, RegExp]>([
    [
      'falls back to asking a person when the handler throws',
      () => {
        throw new Error('boom');
      },
      /threw: boom/,
    ],
    [
      'falls back to asking a person when the handler rejects',
      () => Promise.reject(new Error('nope')),
      /threw: nope/,
    ],
    [
      'falls back to asking a person when the handler returns nothing',
      () => undefined as never,
      /no verdict/,
    ],
    [
      'falls back to asking a person on an unknown verdict',
      () => ({ decision: 'yolo' }) as never,
      /no verdict/,
    ],
  ])('%s', async (_case, handler, fallback) => {
    const verdict = await consultHandler(handler, request, 1_000);
    expect(verdict.decision).toBe('ask');
    expect(verdict.fallback).toMatch(fallback);
  });

  it('falls back to asking a person when the handler exceeds its timeout', async () => {
    jest.useFakeTimers();
    let approveLate: () => void = () => undefined;
    const handler: ConfirmationHandler = () =>
      new Promise((resolve) => {
        approveLate = () => resolve({ decision: 'approve' });
      });
    const consulted = consultHandler(handler, request, 50);
    await jest.advanceTimersByTimeAsync(50);
    approveLate(); // too late: the deadline already answered
    await expect(consulted).resolves.toEqual({
      decision: 'ask',
      fallback: expect.stringMatching(/timed out after 50 ms/),
    });
  });

  it('waits for a slow handler that answers before the timeout', async () => {
    jest.useFakeTimers();
    const handler: ConfirmationHandler = () =>
      new Promise((resolve) => setTimeout(() => resolve({ decision: 'approve' }), 40));
    const consulted = consultHandler(handler, request, 50);
    await jest.advanceTimersByTimeAsync(45);
    await expect(consulted).resolves.toEqual({ decision: 'approve' });
  });

  it('defaults the timeout to 5 seconds', async () => {
    expect(DEFAULT_CONFIRMATION_TIMEOUT_MS).toBe(5_000);
    jest.useFakeTimers();
    const consulted = consultHandler(() => new Promise(() => undefined), request);
    await jest.advanceTimersByTimeAsync(4_999);
    let settled = false;
    void consulted.then(() => (settled = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await expect(consulted).resolves.toMatchObject({
      decision: 'ask',
      fallback: expect.stringMatching(/5000 ms/),
    });
  });

  it('passes the call to the handler', async () => {
    const handler = jest.fn<ReturnType<ConfirmationHandler>, Parameters<ConfirmationHandler>>(() => ({
      decision: 'ask',
    }));
    await consultHandler(handler, request, 1_000);
    expect(handler).toHaveBeenCalledWith(request);
  });
});
