// What one phase of round trips costs, per run: CPU time of every process the bench started for it (utime + stime
// from /proc/<pid>/stat, by role), Redis commands (INFO commandstats) and bytes to and from Redis (INFO stats), each
// as (after − before) / runs. The readings bracket the phase's runs; the end reading waits a moment first, so the
// work a run leaves behind (trailing audit appends, BullMQ's completions) is counted with it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { commandCalls, commandsPerRun, sleep } from './measure';

/** Who a process is in the table: the bench's own process is the driver (HTTP client, SSE reader, stand-ins). */
export const ROLES = ['worker', 'approval', 'redis', 'postgres', 'driver'] as const;
export type Role = (typeof ROLES)[number];

/** One role's processes; `pids` is asked at each reading (a peer's Postgres backends are found by query). */
export interface ProcessGroup {
  role: Role;
  pids: () => number[] | Promise<number[]>;
}

export type CpuPerRun = Partial<Record<Role, number>> & { total: number };

export interface PhaseCost {
  /** ms of CPU per run by role and in total; null where /proc is not there to read (not Linux). */
  cpuMsPerRun: CpuPerRun | null;
  /** INFO commandstats delta / runs: every client of the server counts (commands inside Lua too). */
  redisCommandsPerRun: ReturnType<typeof commandsPerRun>;
  /** INFO stats total_net_input_bytes (to Redis) and total_net_output_bytes (from Redis) deltas / runs. */
  redisBytesPerRun: { in: number; out: number };
}

/** Clock ticks per second of utime/stime (USER_HZ): 100 on every Linux the bench has met, asked of getconf anyway. */
export const CLOCK_TICKS = (() => {
  const answer = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(answer.stdout?.trim());
  return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
})();

/** Whether CPU times can be read at all (Linux /proc). */
export const CAN_READ_CPU = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/**
 * utime + stime of a process in ms (all its threads), or undefined when it is gone. Fields 14 and 15 of
 * /proc/<pid>/stat, counted after the command name, which is in parentheses and may itself hold spaces or ')'.
 */
export function cpuMsOf(pid: number | 'self'): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS : undefined;
}

/** The bench's own process, read the same way as the others. */
export const DRIVER: ProcessGroup = { role: 'driver', pids: () => [process.pid] };

/** Net bytes Redis read from its clients and wrote to them since it started, summed over the servers. */
export async function netBytes(redis: Redis | Redis[]): Promise<{ in: number; out: number }> {
  let input = 0;
  let output = 0;
  for (const server of Array.isArray(redis) ? redis : [redis]) {
    const stats = await server.info('stats');
    input += Number(/total_net_input_bytes:(\d+)/.exec(stats)?.[1] ?? NaN);
    output += Number(/total_net_output_bytes:(\d+)/.exec(stats)?.[1] ?? NaN);
  }
  return { in: input, out: output };
}

type CpuReading = Map<Role, Map<number, number>>;

async function readCpu(groups: ProcessGroup[]): Promise<CpuReading> {
  const reading: CpuReading = new Map();
  for (const group of groups) {
    const byPid = reading.get(group.role) ?? new Map<number, number>();
    for (const pid of await group.pids()) {
      const ms = cpuMsOf(pid);
      if (ms !== undefined) byPid.set(pid, ms);
    }
    reading.set(group.role, byPid);
  }
  return reading;
}

/**
 * ms per run by role between two readings. A process first seen in the end reading (a connection opened during the
 * phase) counts from 0: all of its life was in the phase. One gone by the end reading cannot be counted, so pools
 * that close idle connections must not run under a meter.
 */
function cpuPerRun(before: CpuReading, after: CpuReading, runs: number): CpuPerRun {
  const perRun: CpuPerRun = { total: 0 };
  for (const [role, pids] of after) {
    let ms = 0;
    for (const [pid, end] of pids) ms += end - (before.get(role)?.get(pid) ?? 0);
    perRun[role] = ms / runs;
    perRun.total += ms / runs;
  }
  return perRun;
}

/** Brackets a phase's runs: `const end = await meter.begin(); …runs…; const cost = await end(runs)`. */
export class CostMeter {
  constructor(
    private readonly redis: Redis | Redis[],
    private readonly groups: ProcessGroup[] = [],
    private readonly settleMs = 250,
  ) {}

  async begin(): Promise<(runs: number) => Promise<PhaseCost>> {
    const measureCpu = CAN_READ_CPU && this.groups.length > 0;
    const commandsBefore = await commandCalls(this.redis);
    const bytesBefore = await netBytes(this.redis);
    const cpuBefore = measureCpu ? await readCpu(this.groups) : undefined;
    return async (runs) => {
      await sleep(this.settleMs);
      const cpuAfter = cpuBefore ? await readCpu(this.groups) : undefined;
      const bytesAfter = await netBytes(this.redis);
      const commandsAfter = await commandCalls(this.redis);
      return {
        cpuMsPerRun: cpuBefore && cpuAfter ? cpuPerRun(cpuBefore, cpuAfter, runs) : null,
        redisCommandsPerRun: commandsPerRun(commandsBefore, commandsAfter, runs),
        redisBytesPerRun: {
          in: (bytesAfter.in - bytesBefore.in) / runs,
          out: (bytesAfter.out - bytesBefore.out) / runs,
        },
      };
    };
  }
}
