import { LOGGED_UNTRUSTED_CHARS, truncated } from './unauthenticated-requests';

describe('truncated', () => {
  it('keeps a short value as it is', () => {
    expect(truncated('1700000000')).toBe('1700000000');
  });

  it(`cuts a long value to ${LOGGED_UNTRUSTED_CHARS} characters and says how many were left out`, () => {
    const value = '9'.repeat(8_000);
    expect(truncated(value)).toBe(
      `${'9'.repeat(LOGGED_UNTRUSTED_CHARS)}… (${8_000 - LOGGED_UNTRUSTED_CHARS} more characters)`,
    );
  });
});
