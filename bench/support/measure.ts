// Clocks, HDR histograms, a bounded-concurrency pool, progress bars and the machine description.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { SingleBar, Presets } from 'cli-progress';
import * as hdr from 'hdr-histogram-js';
import type { Redis } from 'ioredis';

/** Wall-clock ms with sub-ms resolution; the probe in the worker processes uses the same formula. */
export const wallNow = () => performance.timeOrigin + performance.now();

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Microsecond-resolution histogram of latencies given in ms, 3 significant digits, up to one hour. */
export class Latencies {
  private readonly histogram = hdr.build({
    bitBucketSize: 64,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
  });
  negatives = 0;

  recordMs(ms: number): void {
    if (ms < 0) this.negatives++; // clock skew between processes: counted, recorded as 0
    this.histogram.recordValue(Math.max(0, Math.round(ms * 1000)));
  }

  summary(): LatencySummary {
    const h = this.histogram;
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count: h.totalCount,
      p50Ms: ms(h.getValueAtPercentile(50)),
      p95Ms: ms(h.getValueAtPercentile(95)),
      p99Ms: ms(h.getValueAtPercentile(99)),
      maxMs: ms(Math.max(h.maxValue, h.getValueAtPercentile(100))),
      meanMs: ms(h.mean),
    };
  }
}

/** Runs `fn` for 0..count-1 with at most `limit` in flight. */
export async function pool(count: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A progress bar on a TTY; a line per quarter otherwise (CI logs, the smoke test). */
export class Progress {
  private readonly bar?: SingleBar;
  private lastQuarter = 0;

  constructor(
    private readonly label: string,
    private readonly total: number,
  ) {
    if (process.stdout.isTTY) {
      this.bar = new SingleBar(
        {
          format: `${label.padEnd(28)} {bar} {percentage}% | {value}/{total} | {eta_formatted} {note}`,
          hideCursor: true,
        },
        Presets.shades_classic,
      );
      this.bar.start(total, 0, { note: '' });
    } else {
      console.log(`[bench] ${label}: 0/${total}`);
    }
  }

  update(value: number, note = ''): void {
    if (this.bar) return this.bar.update(value, { note });
    const quarter = Math.floor((value / this.total) * 4);
    if (quarter > this.lastQuarter) {
      this.lastQuarter = quarter;
      console.log(`[bench] ${this.label}: ${value}/${this.total} ${note}`);
    }
  }

  stop(): void {
    this.bar?.stop();
  }
}

export interface Machine {
  cpuModel: string;
  cores: number;
  node: string;
  redis: string;
  platform: string;
  loadAverage1mAtStart: number;
}

export async function describeMachine(redis: Redis): Promise<Machine> {
  const info = await redis.info('server');
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    node: process.version,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    platform: `${process.platform} ${process.arch}`,
    loadAverage1mAtStart: Number(loadavg()[0].toFixed(2)),
  };
}

export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

/**
 * Calls per command from INFO commandstats (every client of the server counts, not only ours), summed over the
 * servers given (every master of a cluster).
 */
export async function commandCalls(redis: Redis | Redis[]): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const server of Array.isArray(redis) ? redis : [redis])
    for (const match of (await server.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+)/g))
      calls.set(match[1], (calls.get(match[1]) ?? 0) + Number(match[2]));
  return calls;
}

/** All calls of one commandstats reading but INFO itself (the readings' own commands). */
export function totalCalls(calls: Map<string, number>): number {
  let total = 0;
  for (const [name, n] of calls) if (name !== 'info') total += n;
  return total;
}

/**
 * Each server's share of the commands served between two readings per server (same order), e.g. the masters of a
 * cluster: how evenly the load spread.
 */
export function commandShares(before: Map<string, number>[], after: Map<string, number>[]): number[] {
  const served = after.map((a, i) => totalCalls(a) - totalCalls(before[i]));
  const all = served.reduce((sum, n) => sum + n, 0);
  return served.map((n) => (all > 0 ? n / all : 0));
}

/** Redis commands per run between two commandstats readings, every command, the busiest first. */
export function commandsPerRun(before: Map<string, number>, after: Map<string, number>, runs: number) {
  const perCommand: Record<string, number> = {};
  let total = 0;
  const rows = [...after]
    .map(([name, n]) => [name, n - (before.get(name) ?? 0)] as const)
    .filter(([name, n]) => n > 0 && name !== 'info')
    .sort((a, b) => b[1] - a[1]);
  for (const [name, n] of rows) {
    total += n;
    perCommand[name] = Number((n / runs).toFixed(2));
  }
  return { total: Number((total / runs).toFixed(1)), perCommand };
}

/**
 * One sample of the same shape as `samples`, each number the median of that number over the samples: objects are
 * recursed into key by key (a key some samples lack is the median of those that have it); anything else (strings,
 * null) is taken from the first sample.
 */
export function medianOf<T>(samples: T[]): T {
  const first: unknown = samples[0];
  if (typeof first === 'number') return median(samples as number[]) as T;
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first as T;
  const objects = samples as Record<string, unknown>[];
  const keys = new Set(objects.flatMap((s) => Object.keys(s ?? {})));
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = medianOf(objects.map((s) => s?.[key]).filter((v) => v !== undefined));
  return out as T;
}
