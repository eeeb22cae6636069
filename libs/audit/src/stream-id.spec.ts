import { compareStreamIds, nextStreamId } from './stream-id';

describe('stream IDs', () => {
  it.each([
    ['1-0', '2-0', -1],
    ['2-0', '10-0', -1],
    ['5-9', '5-10', -1],
    ['5-3', '5-3', 0],
    ['18446744073709551615-1', '18446744073709551615-0', 1],
  ])('orders %s against %s numerically', (a, b, sign) => {
    expect(Math.sign(compareStreamIds(a, b))).toBe(sign);
  });

  it('steps to the smallest ID after one, without losing precision', () => {
    expect(nextStreamId('1700000000000-9')).toBe('1700000000000-10');
    expect(nextStreamId('1-18446744073709551614')).toBe('1-18446744073709551615');
  });

  it('refuses something that is not an ID', () => {
    expect(() => compareStreamIds('1-0', '+')).toThrow('not a stream entry ID: "+"');
  });
});
