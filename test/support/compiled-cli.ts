// Jest globalSetup of the e2e project. The CLI tests run bin/countersign.js, which loads the compiled CLI from
// dist/ (as `npx countersign` does): it is compiled again first when a source it is built from is newer.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
export const COMPILED_CLI = join(root, 'dist', 'apps', 'cli', 'src', 'main.js');
// The CLI also compiles what `policy test` evaluates with: the worker's agent builder, the approval service's routing.
const SOURCES = [
  'apps/cli/src',
  'apps/agent-worker/src',
  'apps/approval-service/src',
  'libs',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.cli.json',
];

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

function builtAt(): number {
  try {
    return statSync(COMPILED_CLI).mtimeMs;
  } catch {
    return -1;
  }
}

export default function buildCliWhenStale(): void {
  const newest = Math.max(...SOURCES.map((source) => newestMtime(join(root, source))));
  if (builtAt() >= newest) return;
  process.stdout.write('\ncompiling the CLI for its tests (npm run build:cli) …\n');
  execFileSync('npm', ['run', '--silent', 'build:cli'], { cwd: root, stdio: 'inherit' });
}
