// @countersign/sdk as it would be published: libs/sdk built with its own tsconfig (npm run build:sdk) into a temporary
// folder with its package.json, and plain-Node processes that use it (test/support/sdk-guard-process.js).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/** Builds the SDK package into a new temporary folder and returns the folder (require() it as the package). */
export async function buildSdk(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-sdk-'));
  const outDir = join(dir, 'dist');
  const project = join(root, 'libs', 'sdk', 'tsconfig.build.json');
  await run('npx', ['tsc', '-p', project, '--outDir', outDir], { cwd: root });
  await run('npx', ['tsc-alias', '-p', project, '--outDir', outDir], { cwd: root });
  copyFileSync(join(root, 'libs', 'sdk', 'package.json'), join(dir, 'package.json'));
  return dir;
}

/**
 * Every module name the built JavaScript under `dir` requires (node: built-ins, packages and relative paths), leaving
 * out folders named in `skip`.
 */
export function requiredModules(dir: string, skip: readonly string[] = []): Set<string> {
  const found = new Set<string>();
  const walk = (path: string) => {
    if (statSync(path).isDirectory()) {
      if (path !== dir && skip.some((name) => path.endsWith(`/${name}`))) return;
      return readdirSync(path).forEach((name) => walk(join(path, name)));
    }
    if (!path.endsWith('.js')) return;
    for (const match of readFileSync(path, 'utf8').matchAll(/require\("([^"]+)"\)/g)) found.add(match[1]);
  };
  walk(dir);
  return found;
}

/** A plain-Node process guarding one call with the built SDK; its stdout lines are collected. */
export class GuardProcess {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(env: {
    sdkDir: string;
    url: string;
    token: string;
    call: object;
    counterFile: string;
    timeoutMs?: number;
  }) {
    this.child = spawn(process.execPath, [join(__dirname, 'sdk-guard-process.js')], {
      env: {
        PATH: process.env.PATH,
        // The packages the SDK depends on (canonicalize, zod), as an installed package would find them.
        NODE_PATH: join(root, 'node_modules'),
        SDK_DIR: env.sdkDir,
        COUNTERSIGN_URL: env.url,
        COUNTERSIGN_TOKEN: env.token,
        CALL: JSON.stringify(env.call),
        COUNTER_FILE: env.counterFile,
        TIMEOUT_MS: String(env.timeoutMs ?? 20_000),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffered = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    let stderr = '';
    this.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code) => {
        if (code) this.lines.push(`stderr: ${stderr}`);
        resolve(code);
      }),
    );
  }

  /** The JSON result line, once the process has printed it and exited. */
  async result(): Promise<{ status: string; approvalId: string; heavy: string[] }> {
    const code = await this.exited;
    const line = this.lines.find((l) => l.startsWith('{'));
    if (code !== 0 || !line) throw new Error(`guard process exited ${code}: ${this.lines.join('\n')}`);
    return JSON.parse(line) as { status: string; approvalId: string; heavy: string[] };
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}
