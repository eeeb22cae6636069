// A redis-server of the bench's own, started with the memory settings of docker-compose.yml's redis service: the
// round trips' CPU, commands and bytes are then Redis's alone (no other client counts), and the parked-run memory
// phase (a server of its own) gets the figure production's encoding gives.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { parse } from 'yaml';
import { freePort, ROOT } from './processes';
import { sleep } from './measure';

/** Options of the compose command that decide durability or where the server listens, not how it stores data. */
const NOT_MEMORY = new Set([
  'appendonly',
  'appendfsync',
  'appendfilename',
  'save',
  'dir',
  'dbfilename',
  'port',
  'bind',
]);

/** `--name value...` of the compose file's redis command, persistence and listening options left out. */
export function composeMemorySettings(file = join(ROOT, 'docker-compose.yml')): string[] {
  const compose = parse(readFileSync(file, 'utf8')) as { services: { redis: { command: unknown } } };
  const command = compose.services.redis.command;
  if (!Array.isArray(command)) throw new Error(`${file}: services.redis.command must be a list`);
  const args = command.slice(1).map(String);
  const settings: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (!args[i].startsWith('--')) continue;
    const name = args[i].slice(2);
    const values: string[] = [];
    while (i + 1 < args.length && !args[i + 1].startsWith('--')) values.push(args[++i]);
    if (!NOT_MEMORY.has(name)) settings.push(`--${name}`, ...values);
  }
  return settings;
}

/** The redis-server binary: REDIS_SERVER_BIN (as the reliability suite reads it), else the one on the PATH. */
export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';

export interface PrivateRedis {
  url: string;
  /** The redis-server process, whose CPU the bench reads. */
  pid: number;
  /** The settings taken from docker-compose.yml. */
  settings: string[];
  stop(): Promise<void>;
}

/** Whether REDIS_SERVER runs at all. */
export function haveRedisServer(): boolean {
  return spawnSync(REDIS_SERVER, ['--version']).status === 0;
}

/** Undefined when REDIS_SERVER does not run (the caller says what to do). */
export async function startPrivateRedis(): Promise<PrivateRedis | undefined> {
  if (!haveRedisServer()) return undefined;
  const settings = composeMemorySettings();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cs-bench-redis-'));
  const proc = spawn(
    REDIS_SERVER,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...settings,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  proc.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  proc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close': exited, and its output pipes closed too (nothing left open for a test runner to wait on).
  const exited = new Promise<void>((done) => proc.once('close', () => done()));
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // Refused connections before the server listens reject connect() below; this only keeps ioredis quiet.
  probe.on('error', () => undefined);
  try {
    for (let attempt = 0; ; attempt++) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited: ${output.slice(-2_000)}`);
      try {
        await probe.connect();
        await probe.ping();
        break;
      } catch (error) {
        if (attempt >= 100) throw error;
        probe.disconnect();
        await sleep(50);
      }
    }
  } catch (error) {
    proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  } finally {
    probe.disconnect();
  }
  return {
    url,
    pid: proc.pid!,
    settings,
    stop: async () => {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
