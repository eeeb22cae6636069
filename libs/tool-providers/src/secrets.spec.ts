import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MissingSecretError,
  MissingSettingError,
  referencedVariables,
  SecretSource,
  SecretRefSchema,
} from './secrets';

describe('SecretSource', () => {
  it('reads a secret from the environment map, with its prefix', () => {
    const sut = new SecretSource({ API_TOKEN: 'tok-123456' });
    expect(sut.secret({ $secret: 'API_TOKEN' })).toBe('tok-123456');
    expect(sut.value({ $secret: 'API_TOKEN', prefix: 'Bearer ' })).toBe('Bearer tok-123456');
    expect(sut.value('plain')).toBe('plain');
  });

  it('reads NAME_FILE when NAME is not set, at each call (a rotated file is used at once)', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cs-secret-')), 'token');
    writeFileSync(file, 'first-secret\n');
    const sut = new SecretSource({ API_TOKEN_FILE: file });
    expect(sut.secret({ $secret: 'API_TOKEN' })).toBe('first-secret');
    writeFileSync(file, 'second-secret');
    expect(sut.secret({ $secret: 'API_TOKEN' })).toBe('second-secret');
  });

  it('refuses a missing secret naming it, never a value', () => {
    const sut = new SecretSource({ OTHER: 'x' });
    expect(() => sut.secret({ $secret: 'API_TOKEN' })).toThrow(MissingSecretError);
    expect(() => sut.secret({ $secret: 'API_TOKEN' })).toThrow(/API_TOKEN is not set.*API_TOKEN_FILE/);
    expect(() =>
      new SecretSource({ API_TOKEN_FILE: '/nonexistent/file' }).secret({ $secret: 'API_TOKEN' }),
    ).toThrow(MissingSecretError);
    expect(sut.missing([{ $secret: 'API_TOKEN' }, 'plain', { $secret: 'OTHER' }])).toEqual(['API_TOKEN']);
  });

  it('scrubs every secret value it handed out from text, and only those', () => {
    const sut = new SecretSource({ A: 'alpha-secret', B: 'beta-secret', C: 'never-read' });
    sut.secret({ $secret: 'A' });
    sut.value({ $secret: 'B', prefix: 'Bearer ' });
    expect(sut.scrub('alpha-secret / Bearer beta-secret / never-read / alpha-secretalpha-secret')).toBe(
      '[secret A] / Bearer [secret B] / never-read / [secret A][secret A]',
    );
  });

  it('reads plain settings with their default, and refuses a missing one naming it', () => {
    const sut = new SecretSource({ URL: 'http://x' });
    expect(sut.plain({ $env: 'URL' })).toBe('http://x');
    expect(sut.plain({ $env: 'NOPE', default: 'http://d' })).toBe('http://d');
    expect(() => sut.plain({ $env: 'NOPE' })).toThrow(MissingSettingError);
  });

  it('accepts only environment-variable names as references', () => {
    expect(SecretRefSchema.safeParse({ $secret: 'lower-case' }).success).toBe(false);
    expect(SecretRefSchema.safeParse({ $secret: 'OK_NAME', extra: 1 }).success).toBe(false);
  });

  it('lists the variables a config refers to', () => {
    const config = {
      mcpServers: { a: { url: { $env: 'A_URL' }, headers: { x: { $secret: 'A_TOKEN' } } } },
      httpTools: { t: { headers: { y: { $secret: 'T_KEY', prefix: 'Key ' } }, url: 'http://x' } },
    };
    expect(referencedVariables(config)).toEqual(['A_TOKEN', 'A_TOKEN_FILE', 'A_URL', 'T_KEY', 'T_KEY_FILE']);
  });
});
