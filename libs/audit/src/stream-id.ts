// Redis Stream entry IDs (`<ms>-<seq>`, both unsigned 64-bit): ordered and stepped without losing precision.

export const STREAM_ID = /^\d{1,20}-\d{1,20}$/;

function parts(id: string): [bigint, bigint] {
  if (!STREAM_ID.test(id)) throw new RangeError(`not a stream entry ID: "${id}"`);
  const [ms, seq] = id.split('-');
  return [BigInt(ms), BigInt(seq)];
}

/** Negative, zero or positive as `a` comes before, is, or comes after `b` in a stream. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = parts(a);
  const [bm, bs] = parts(b);
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

/** The smallest ID after `id` (what XTRIM MINID keeps from, to remove `id` and everything before it). */
export function nextStreamId(id: string): string {
  const [ms, seq] = parts(id);
  return `${ms}-${seq + 1n}`;
}
