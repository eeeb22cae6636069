// A redis-server of the bench's own for the parked-run memory phase, started with the memory settings of
// docker-compose.yml's redis service: the figure is then the one production's encoding gives, and no other
// client of a shared Redis moves it.
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

export interface PrivateRedis {
  url: string;
  /** The settings taken from docker-compose.yml. */
  settings: string[];
  stop(): Promise<void>;
}

/** Undefined when there is no `redis-server` on the PATH (the caller falls back to the shared Redis). */
export async function startPrivateRedis(): Promise<PrivateRedis | undefined> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return undefined;
  const settings = composeMemorySettings();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cs-bench-redis-'));
  const proc = spawn(
    'redis-server',
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
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
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
