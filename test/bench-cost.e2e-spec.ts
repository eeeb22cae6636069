// The bench's cost meter (bench/support/cost.ts) against real processes and a real redis-server: CPU times read from
// /proc agree with what the process itself measures, and commands and bytes per run are exactly what was sent; the
// ports it hands its children.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { CostMeter, cpuMsOf, DRIVER } from '../bench/support/cost';
import { medianOf } from '../bench/support/measure';
import { startPrivateRedis, type PrivateRedis } from '../bench/support/private-redis';
import { freePort } from '../bench/support/processes';

/** A node process named with a space and a ')' (fields of /proc/<pid>/stat are counted after the last one). */
function busyChild(busyMs: number) {
  const script = `
    process.title = 'cs b) x';
    const ms = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
    while (ms() < ${busyMs});
    console.log(ms());
    process.stdin.resume(); // stays alive, idle, until stdin closes
    process.stdin.on('end', () => process.exit(0));`;
  return spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
}

describe('bench cost meter', () => {
  it('reads utime + stime of a process from /proc, in agreement with its own count, and nothing once it is gone', async () => {
    const child = busyChild(400);
    const exited = once(child, 'exit');
    try {
      const [line] = (await once(child.stdout!, 'data')) as [Buffer];
      const ownMs = Number(line.toString().trim());
      const readMs = cpuMsOf(child.pid!)!;
      expect(ownMs).toBeGreaterThanOrEqual(400);
      // Clock ticks are 10 ms; the child keeps running (idle) between its count and ours.
      expect(Math.abs(readMs - ownMs)).toBeLessThan(40);
    } finally {
      child.stdin!.end();
      await exited;
    }
    expect(cpuMsOf(child.pid!)).toBeUndefined();
  });

  describe('on a private redis-server', () => {
    let server: PrivateRedis;
    let redis: Redis;
    beforeAll(async () => {
      server = (await startPrivateRedis())!;
      redis = new Redis(server.url);
    });
    afterAll(async () => {
      await redis.quit();
      await server.stop();
    });

    it('counts commands, bytes to Redis and CPU per run by role, the total their sum', async () => {
      const meter = new CostMeter(redis, [{ role: 'redis', pids: () => [server.pid] }, DRIVER], 0);
      const runs = 3_000;
      const value = 'v'.repeat(100);
      const end = await meter.begin();
      for (let i = 0; i < runs; i++) await redis.set(`k${i % 10}`, value);
      const cost = await end(runs);

      expect(cost.redisCommandsPerRun).toEqual({ total: 1, perCommand: { set: 1 } });
      // SET k<digit> <100 bytes> in RESP: *3 $3 SET $2 k<d> $100 <value>, each line ending in CRLF.
      const setBytes = Buffer.byteLength(`*3\r\n$3\r\nSET\r\n$2\r\nk0\r\n$100\r\n${value}\r\n`);
      expect(cost.redisBytesPerRun.in).toBeGreaterThanOrEqual(setBytes);
      expect(cost.redisBytesPerRun.in).toBeLessThan(setBytes + 0.1); // + the meter's own two INFO requests / runs
      expect(cost.redisBytesPerRun.out).toBeGreaterThanOrEqual(Buffer.byteLength('+OK\r\n'));
      expect(cost.cpuMsPerRun!.redis).toBeGreaterThan(0);
      expect(cost.cpuMsPerRun!.driver).toBeGreaterThan(0);
      expect(cost.cpuMsPerRun!.total).toBeCloseTo(cost.cpuMsPerRun!.redis! + cost.cpuMsPerRun!.driver!);
      expect(cost.cpuMsPerRun!.worker).toBeUndefined();
    });
  });

  it('takes the median of every number over samples of one shape', () => {
    const samples = [
      { runs: 50, cpu: { worker: 1, total: 4 }, label: 'a', missing: null },
      { runs: 50, cpu: { worker: 3, total: 2 }, label: 'b', missing: null },
      { runs: 50, cpu: { worker: 2, total: 9, redis: 7 }, label: 'c', missing: null },
    ];
    expect(medianOf(samples)).toEqual({
      runs: 50,
      cpu: { worker: 2, total: 4, redis: 7 },
      label: 'a',
      missing: null,
    });
  });

  it('hands out ports below the ephemeral range, free to listen on, never the same one twice', async () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(20);
    for (const port of ports) {
      expect(port).toBeLessThan(low);
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
