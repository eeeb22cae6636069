import { mapWithConcurrency } from './concurrency';

/** A task whose completion the test controls, so in-flight counts are exact, not timing-dependent. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('mapWithConcurrency', () => {
  it('never has more than `limit` calls in flight and keeps the input order', async () => {
    const gates = Array.from({ length: 10 }, gate);
    let inFlight = 0;
    let peak = 0;
    const mapped = mapWithConcurrency(gates, 3, async (g, i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await g.opened;
      inFlight--;
      return i * 10;
    });
    await Promise.resolve();
    expect(inFlight).toBe(3);
    // finish in reverse order so completion order differs from input order
    for (const g of [...gates].reverse()) {
      g.open();
      await new Promise((r) => setImmediate(r));
    }
    await expect(mapped).resolves.toEqual([0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
    expect(peak).toBe(3);
  });

  it.each([
    ['fewer items than the limit', 2, 4],
    ['as many items as the limit', 4, 4],
  ])('starts every item at once with %s, and keeps the input order', async (_case, count, limit) => {
    const gates = Array.from({ length: count }, gate);
    let started = 0;
    const mapped = mapWithConcurrency(gates, limit, async (g, i) => {
      started++;
      await g.opened;
      return i;
    });
    expect(started).toBe(count);
    for (const g of [...gates].reverse()) g.open();
    await expect(mapped).resolves.toEqual(gates.map((_, i) => i));
  });

  it('returns an empty list for no items', async () => {
    await expect(mapWithConcurrency([], 4, async () => 1)).resolves.toEqual([]);
  });

  it.each([0, -1, 1.5, NaN])('rejects a limit of %p', async (limit) => {
    await expect(mapWithConcurrency([1], limit, async (x) => x)).rejects.toThrow(RangeError);
  });
});
