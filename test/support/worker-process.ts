// An agent worker as its own process (main.ts under ts-node), for tests that read its logs or kill it.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type WorkerHarness, workerEnv } from './agent-worker-harness';
import { testFaultsFrom } from './test-faults';

const REPO = join(__dirname, '..', '..');

/** How tests start the worker's main.ts (from the repository's root): ts-node with the path aliases, as `npm start` does. */
export const WORKER_MAIN_ARGS: readonly string[] = [
  '-r',
  'ts-node/register/transpile-only',
  '-r',
  'tsconfig-paths/register',
  'apps/agent-worker/src/main.ts',
];

/**
 * What a test spawns for a worker with this environment: main.ts, or, when the environment names test faults, the
 * test entry that gives them to the worker as run hooks (support/worker-with-faults.ts).
 */
export function workerEntryArgs(env: Record<string, string | undefined>): string[] {
  if (testFaultsFrom(env).length === 0) return [...WORKER_MAIN_ARGS];
  return [...WORKER_MAIN_ARGS.slice(0, -1), 'test/support/worker-with-faults.ts'];
}

/** main.ts as its own process (its logs are what a deployment would collect; LOG_LEVEL info unless `extra` says). */
export async function spawnWorker(
  h: WorkerHarness,
  extra: Record<string, string>,
): Promise<{ url: string; process: ChildProcess; output: () => string }> {
  const env = {
    ...process.env,
    ...workerEnv(h.prefixes, extra),
    LOG_LEVEL: 'info',
    ...extra,
    PORT: '0',
    HOST: '127.0.0.1',
  };
  const proc = spawn(process.execPath, workerEntryArgs(env), {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"agent worker listening"/.exec(output);
      if (match) resolve(match[1]);
    });
    proc.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${output}`)));
  });
  return { url, process: proc, output: () => output };
}

/** SIGTERM (graceful) to a worker process this test started, by its own handle. */
export async function stopProcess(proc: ChildProcess | undefined): Promise<void> {
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}
