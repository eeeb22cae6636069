// The one encoded argument of a script: what it lets through, and what it refuses because Lua could not tell.
import { encodeScriptArgs } from './lua';

describe('encodeScriptArgs', () => {
  it('writes a JSON object, leaving out fields that are undefined', () => {
    expect(
      encodeScriptArgs({
        callId: 'c1',
        attempt: 2,
        spend: false,
        list: ['a'],
        nested: { at: 1 },
        gone: undefined,
      }),
    ).toBe('{"callId":"c1","attempt":2,"spend":false,"list":["a"],"nested":{"at":1}}');
  });

  it.each([
    ['null', { reason: null as unknown as string }, 'script argument "reason" is null'],
    ['NaN', { now: NaN }, 'script argument "now" is NaN, not a safe integer'],
    ['Infinity', { nested: { at: Infinity } }, 'script argument "at" is Infinity, not a safe integer'],
    ['a fraction', { ms: 1.5 }, 'script argument "ms" is 1.5, not a safe integer'],
    ['an unsafe integer', { big: 2 ** 53 }, 'not a safe integer'],
  ])('refuses %s', (_case, args, message) => {
    expect(() => encodeScriptArgs(args)).toThrow(message);
  });

  it('turns a lone surrogate into U+FFFD, as Redis got it when strings were arguments of their own', () => {
    const encoded = encodeScriptArgs({ reason: 'a\ud800b', pair: '😀', list: ['\udc00'] });
    expect(encoded).toBe('{"reason":"a\ufffdb","pair":"😀","list":["\ufffd"]}');
    expect(Buffer.from(JSON.parse(encoded).reason)).toEqual(Buffer.from('a\ud800b'));
  });
});
