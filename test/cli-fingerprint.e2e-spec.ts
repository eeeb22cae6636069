// Runs the real `countersign` binary (as `npx countersign` does: the compiled CLI in dist/) and checks it agrees
// with the library.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fingerprint, printableReadableForm } from '@countersign/authorization';

const bin = join(__dirname, '..', 'bin', 'countersign.js');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI from a directory outside the repo, so it must not depend on the working directory. */
function countersign(...args: string[]): Promise<CliResult> {
  return runBin(bin, ...args);
}

function runBin(file: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [file, ...args],
      { cwd: tmpdir(), timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('countersign fingerprint', () => {
  it('prints the same fingerprint as the library', async () => {
    const result = await countersign('fingerprint', 'restart_service', '{"service":"api"}');
    expect(result).toEqual({
      code: 0,
      stdout: `${fingerprint('restart_service', { service: 'api' })}\n`,
      stderr: '',
    });
  });

  it('prints the fingerprint of the canonical form, whatever the spelling of the JSON', async () => {
    const result = await countersign(
      'fingerprint',
      'scale',
      '{ "replicas" : 1e2, "zone": {"b":1.0,"a":[2,1]} }',
    );
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(fingerprint('scale', { zone: { a: [2, 1], b: 1 }, replicas: 100 }));
  });

  it('prints the readable form too with --readable', async () => {
    const result = await countersign('fingerprint', '--readable', 'restart_service', '{"service":"api"}');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      fingerprint('restart_service', { service: 'api' }),
      printableReadableForm('restart_service', { service: 'api' }),
      '',
    ]);
  });

  it.each([
    ['invalid JSON', 'restart_service', '{service: api}', /not valid JSON/],
    ['an array', 'restart_service', '["api"]', /must be a JSON object, got an array/],
    ['null', 'restart_service', 'null', /must be a JSON object, got null/],
    ['a string', 'restart_service', '"api"', /must be a JSON object, got string/],
    ['an invalid tool name', 'restart service', '{}', /toolName "restart service"/],
  ])('exits with code 2 and a clear error for %s', async (_case, tool, argsJson, message) => {
    const result = await countersign('fingerprint', tool, argsJson);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('explains itself with --help', async () => {
    const result = await countersign('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/fingerprint \[options\] <toolName> <argsJson>/);
  });

  it('tells how to build the CLI when it is not compiled (a checkout without `npm ci`)', async () => {
    const checkout = mkdtempSync(join(tmpdir(), 'cs-unbuilt-'));
    mkdirSync(join(checkout, 'bin'));
    copyFileSync(bin, join(checkout, 'bin', 'countersign.js'));
    const result = await runBin(join(checkout, 'bin', 'countersign.js'), '--help');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('the CLI is not built yet');
    expect(result.stderr).toContain('npm run build:cli');
  });
});
