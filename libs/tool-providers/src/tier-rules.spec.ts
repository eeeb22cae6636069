import { TierRules } from './tier-rules';

describe('TierRules', () => {
  const sut = new TierRules({
    '*': 'confirm',
    'read_*': 'auto',
    'read_secrets*': 'manual_only',
    list_directory: 'auto',
    'drop_?able': 'manual_only',
  });

  it.each([
    ['the most specific pattern wins', 'read_file', 'auto'],
    ['a longer pattern beats a shorter one', 'read_secrets_file', 'manual_only'],
    ['an exact name beats every pattern', 'list_directory', 'auto'],
    ['the catch-all applies to the rest', 'write_file', 'confirm'],
    ['? matches one character', 'drop_table', 'manual_only'],
  ] as const)('%s (%s → %s)', (_case, name, tier) => {
    expect(sut.tierOf(name)).toBe(tier);
  });

  it('makes a tool no rule names confirm', () => {
    expect(new TierRules({ 'read_*': 'auto' }).tierOf('write_file')).toBe('confirm');
    expect(new TierRules().tierOf('anything')).toBe('confirm');
  });

  it('takes the stricter tier of two equally specific patterns', () => {
    const rules = new TierRules({ 'a*': 'auto', '*b': 'manual_only' });
    expect(rules.tierOf('ab')).toBe('manual_only');
  });

  it.each([
    ['destructiveHint: true raises auto to confirm', 'read_file', { destructiveHint: true }, 'confirm'],
    [
      'readOnlyHint: false (destructive by default) raises auto',
      'read_file',
      { readOnlyHint: false },
      'confirm',
    ],
    [
      'readOnlyHint: false with destructiveHint: false does not raise',
      'read_file',
      { readOnlyHint: false, destructiveHint: false },
      'auto',
    ],
    ['readOnlyHint: true never lowers', 'write_file', { readOnlyHint: true }, 'confirm'],
    ['destructiveHint: false never lowers', 'write_file', { destructiveHint: false }, 'confirm'],
    ['a hint never lowers manual_only', 'read_secrets_x', { readOnlyHint: true }, 'manual_only'],
    [
      'a destructive hint leaves manual_only as it is',
      'drop_table',
      { destructiveHint: true },
      'manual_only',
    ],
    ['no hints: the config decides', 'read_file', {}, 'auto'],
  ] as const)('%s', (_case, name, hints, tier) => {
    expect(sut.tierOf(name, hints)).toBe(tier);
  });
});
