import {
  evaluatePrecondition,
  MAX_PRECONDITION_CHARS,
  preconditionDigest,
  samePrecondition,
} from './precondition';

const ctx = { runId: 'run-1', agent: 'ops', userId: 'alice', scopes: [], callId: 'call-1' };
const tool = (check: () => unknown, timeoutMs?: number) => ({
  name: 'scale_service',
  precondition: { check, ...(timeoutMs ? { timeoutMs } : {}) },
});

describe('preconditionDigest', () => {
  it('is the same for the same value however it was serialized, and differs for another value', () => {
    expect(preconditionDigest({ a: 1, b: [1, 2] })).toBe(
      preconditionDigest(JSON.parse('{"b":[1,2],"a":1.0}')),
    );
    expect(preconditionDigest({ replicas: 6 })).not.toBe(preconditionDigest({ replicas: 9 }));
    expect(preconditionDigest({ replicas: 6 })).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('evaluatePrecondition', () => {
  afterEach(() => jest.useRealTimers());

  it('is undefined for a tool that declares none', async () => {
    expect(await evaluatePrecondition({ name: 'x' }, {}, ctx)).toBeUndefined();
  });

  it('gives the value, as JSON, with its digest, and hands the check the arguments and the caller', async () => {
    const check = jest.fn(async (args: unknown) => ({
      service: (args as { service: string }).service,
      replicas: 6,
    }));
    const result = await evaluatePrecondition(
      { name: 'x', precondition: { check } },
      { service: 'payments' },
      ctx,
    );
    expect(result).toEqual({
      ok: true,
      value: { service: 'payments', replicas: 6 },
      digest: preconditionDigest({ replicas: 6, service: 'payments' }),
    });
    expect(check).toHaveBeenCalledWith({ service: 'payments' }, ctx);
  });

  it('tells a changed value from a held one', async () => {
    let replicas = 6;
    const t = tool(() => ({ replicas }));
    const first = await evaluatePrecondition(t, {}, ctx);
    const same = await evaluatePrecondition(t, {}, ctx);
    replicas = 9;
    const changed = await evaluatePrecondition(t, {}, ctx);
    if (!first?.ok || !same?.ok || !changed?.ok) throw new Error('expected values');
    expect(samePrecondition(first, same)).toBe(true);
    expect(samePrecondition(first, changed)).toBe(false);
  });

  it.each([
    [
      'throws',
      () => {
        throw new Error('cluster unreachable');
      },
      /cluster unreachable/,
    ],
    ['rejects', () => Promise.reject(new Error('403 from the API')), /403 from the API/],
    ['answers nothing', () => undefined, /answered nothing/],
    ['answers a value with no JSON form', () => ({ n: Number.NaN }), /no JSON form/],
    ['answers too long a value', () => ({ text: 'x'.repeat(MAX_PRECONDITION_CHARS) }), /at most 1000/],
  ])('fails closed when the check %s', async (_what, check, why) => {
    const result = await evaluatePrecondition(tool(check), {}, ctx);
    expect(result?.ok).toBe(false);
    expect(result && !result.ok && result.error).toMatch(why);
  });

  it('fails closed when the check does not answer by its deadline, and does not wait longer', async () => {
    jest.useFakeTimers();
    const pending = evaluatePrecondition(
      tool(() => new Promise(() => undefined), 500),
      {},
      ctx,
    );
    let settled = false;
    void pending.then(() => (settled = true));
    await jest.advanceTimersByTimeAsync(499);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await pending).toEqual({ ok: false, error: 'no answer within 500 ms' });
  });
});
