import type { Tier } from '@countersign/contracts';
import { ConfirmationPolicy } from './confirmation-policy';

describe('ConfirmationPolicy', () => {
  it.each<[string, (p: ConfirmationPolicy) => unknown, string, Tier, Tier]>([
    ['keeps an auto tool auto by default', () => undefined, 'read_logs', 'auto', 'auto'],
    ['keeps a confirm tool confirm by default', () => undefined, 'restart', 'confirm', 'confirm'],
    [
      'moves a named auto tool to confirm',
      (p) => p.requireConfirmation('read_logs'),
      'read_logs',
      'auto',
      'confirm',
    ],
    ['leaves other auto tools alone', (p) => p.requireConfirmation('restart'), 'read_logs', 'auto', 'auto'],
    [
      'moves every auto tool to confirm with ForAll',
      (p) => p.requireConfirmationForAll(),
      'read_logs',
      'auto',
      'confirm',
    ],
    [
      'never lowers manual_only (named)',
      (p) => p.requireConfirmation('drop'),
      'drop',
      'manual_only',
      'manual_only',
    ],
    [
      'never lowers manual_only (ForAll)',
      (p) => p.requireConfirmationForAll(),
      'drop',
      'manual_only',
      'manual_only',
    ],
  ])('%s', (_case, configure, tool, declared, expected) => {
    const sut = new ConfirmationPolicy();
    configure(sut);
    expect(sut.effectiveTier(tool, declared)).toBe(expected);
  });

  it('accepts several names at once', () => {
    const sut = new ConfirmationPolicy().requireConfirmation('a', 'b');
    expect([
      sut.effectiveTier('a', 'auto'),
      sut.effectiveTier('b', 'auto'),
      sut.effectiveTier('c', 'auto'),
    ]).toEqual(['confirm', 'confirm', 'auto']);
  });
});
