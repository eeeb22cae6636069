import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  const options = { initialDelayMs: 500, maxDelayMs: 30_000 };

  it('doubles from the initial delay up to the ceiling', () => {
    expect([0, 1, 2, 3, 6, 7, 100].map((n) => backoffDelay(n, options))).toEqual([
      500, 1000, 2000, 4000, 30_000, 30_000, 30_000,
    ]);
  });
});
