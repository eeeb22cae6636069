// A TypeScript script of the tests run as a process of its own (ts-node, the repository's path aliases), as an agent
// framework's process would be: started, read line by line, killed.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from './redis';

const root = join(__dirname, '..', '..');

export class ScriptProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private stderr = '';

  /** Runs `test/support/<script>` with `env` added to a minimal environment. */
  constructor(script: string, env: Record<string, string>) {
    this.child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', join(__dirname, script)],
      { cwd: root, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let buffered = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** The first JSON line whose `event` is `event`. */
  waitForEvent<T = Record<string, unknown>>(event: string, timeoutMs = 30_000): Promise<T> {
    return waitFor(
      () => {
        const line = this.lines.find(
          (l) => l.startsWith('{') && (JSON.parse(l) as { event?: string }).event === event,
        );
        if (line) return JSON.parse(line) as T;
        if (this.child.exitCode !== null)
          throw new Error(
            `exited ${this.child.exitCode} before "${event}": ${this.lines.join('\n')}\n${this.stderr}`,
          );
        return undefined;
      },
      `"${event}" from ${this.child.pid}`,
      timeoutMs,
    );
  }

  kill(): Promise<number | null> {
    this.child.kill('SIGKILL');
    return this.exited;
  }
}
