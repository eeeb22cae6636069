// Finds a Redis for the demo: the one on REDIS_URL if it answers, else a throwaway redis-server in a temp dir.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports';

export interface DemoRedis {
  url: string;
  /** True when the demo started this server (and stops it at the end). */
  started: boolean;
  stop(): Promise<void>;
}

export class NoRedisError extends Error {
  constructor(url: string) {
    super(
      `No Redis answers on ${url} and no redis-server binary is installed: install one (apt-get install redis-server, brew install redis) or start one (docker run -p 6379:6379 redis:7) or set REDIS_URL.`,
    );
    this.name = this.constructor.name;
  }
}

export async function ping(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export async function ensureRedis(url: string): Promise<DemoRedis> {
  if (await ping(url)) return { url, started: false, stop: async () => undefined };
  if (spawnSync('redis-server', ['--version']).status !== 0) throw new NoRedisError(url);

  const dir = mkdtempSync(join(tmpdir(), 'countersign-demo-redis-'));
  const port = await freePort(6379);
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const localUrl = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 50; i++) {
    if (await ping(localUrl)) return { url: localUrl, started: true, stop };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`redis-server did not start on port ${port}`);
}
