// Agent workers as real processes (main.ts, the way deployments run them), so a fault is a real kill -9.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InfraView } from '@countersign/demo-infra';
import { bearer } from '../../support/principals';
import { workerEntryArgs } from '../../support/worker-process';
import { waitFor } from '../../support/redis';
import { freePort } from './redis-servers';

const REPO = join(__dirname, '..', '..', '..');
const LOG_DIR = mkdtempSync(join(tmpdir(), 'cs-reliability-logs-'));

/** The repo's agents config with the `ops` agent's simulated infrastructure changed (e.g. slow restarts). */
export function agentsConfigWith(infra: { restartMs?: number }): string {
  const config = JSON.parse(readFileSync(join(REPO, 'test/support/agents.json'), 'utf8'));
  config.agents.ops.infra = { ...config.agents.ops.infra, ...infra };
  const file = join(mkdtempSync(join(tmpdir(), 'cs-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Every worker process still running, so a scenario that timed out cannot leave one behind. */
const running = new Set<ChildProcess>();

/** kill -9 of every worker process this suite started (the suite's afterAll, and on exit). */
export function killAllWorkerProcesses(): void {
  for (const proc of running) proc.kill('SIGKILL');
  running.clear();
}
process.once('exit', killAllWorkerProcesses);

export class WorkerProcess {
  private proc?: ChildProcess;
  private launches = 0;
  readonly url: string;

  private constructor(
    readonly name: string,
    private readonly port: number,
    private readonly env: Record<string, string>,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  /** `env` is the worker's whole environment (see workerEnv); PORT and HOST are set here. */
  static async start(name: string, env: Record<string, string>): Promise<WorkerProcess> {
    const worker = new WorkerProcess(name, await freePort(), env);
    await worker.launch();
    return worker;
  }

  get logFile(): string {
    return join(LOG_DIR, `${this.name}.log`);
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  private async launch(): Promise<void> {
    const log = openSync(this.logFile, 'a');
    this.launches++;
    const proc = spawn(process.execPath, workerEntryArgs(this.env), {
      cwd: REPO,
      env: { ...process.env, ...this.env, PORT: String(this.port), HOST: '127.0.0.1' },
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    this.proc = proc;
    running.add(proc);
    let exited = false;
    proc.once('exit', () => {
      exited = true;
      running.delete(proc);
    });
    await waitFor(
      async () => {
        if (exited) throw new Error(`worker ${this.name} exited at start; see ${this.logFile}`);
        return (await fetch(`${this.url}/health`)).ok;
      },
      `worker ${this.name} to be healthy (log: ${this.logFile})`,
      // ts-node compiles the worker at start; three at once on a loaded 2-core machine take a while.
      90_000,
      100,
    );
  }

  /** kill -9: no graceful shutdown, locks are left to expire. */
  async kill(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  /** SIGTERM: the worker finishes in-flight calls first. Killed (-9) if it has not exited after 15 s. */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return undefined;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once('exit', (code, signal) => resolve({ code, signal })),
    );
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
    const how = await exited;
    clearTimeout(timer);
    return how;
  }

  /** kill -9 if still running, then start again; `change` overrides environment variables from then on. */
  async restart(change: Record<string, string> = {}): Promise<void> {
    await this.kill();
    Object.assign(this.env, change);
    await this.launch();
  }

  /** Resolves when the process has exited (at once if it is not running). */
  async exited(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise((resolve) => proc.once('exit', resolve));
  }

  async infra(): Promise<InfraView> {
    const res = await fetch(`${this.url}/demo/infra`, { headers: bearer('alice') });
    if (!res.ok) throw new Error(`GET /demo/infra answered ${res.status}`);
    return (await res.json()) as InfraView;
  }
}

/** Restart counts of every service, read on /demo/infra: each restart is one real execution. */
export async function restartCounts(worker: WorkerProcess): Promise<Map<string, number>> {
  const view = await worker.infra();
  return new Map(view.services.map((s) => [s.name, s.restarts]));
}
