import { createHash } from 'node:crypto';
import {
  canonicalJson,
  fingerprint,
  FINGERPRINT_SEPARATOR,
  printableReadableForm,
  readableForm,
} from './fingerprint';

/** sha256 computed here, independently of the library, over a literal string. */
const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('fingerprint', () => {
  describe('known-answer vectors (canonical JSON written out by hand)', () => {
    it.each([
      ['restart_service', { service: 'api' }, 'restart_service\u001f{"service":"api"}'],
      [
        'scale',
        { replicas: 1e2, target: { zone: 'b', az: 'a' }, tags: [2, 'x', true, null] },
        'scale\u001f{"replicas":100,"tags":[2,"x",true,null],"target":{"az":"a","zone":"b"}}',
      ],
      [
        'emit',
        { n: 1e21, z: -0, f: 0.1, s: '€\n\u000f' },
        'emit\u001f{"f":0.1,"n":1e+21,"s":"€\\n\\u000f","z":0}',
      ],
      ['noop', {}, 'noop\u001f{}'],
    ])('fingerprint(%s, %j) is sha256 of its RFC 8785 readable form', (tool, args, literal) => {
      expect(readableForm(tool, args)).toBe(literal);
      expect(fingerprint(tool, args)).toBe(sha256Hex(literal));
    });

    // Computed outside node: printf 'restart_service\x1f{"service":"api"}' | sha256sum
    it('pins restart_service {"service":"api"} to a fixed digest', () => {
      expect(fingerprint('restart_service', { service: 'api' })).toBe(
        '9e76e1ccf9a5a76ca800218faee6a8fca138c81a69a89a6f92d049bd40b492bd',
      );
    });
  });

  it('is 64 lowercase hex characters', () => {
    expect(fingerprint('restart_service', { service: 'api' })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('separates the tool name from the arguments with U+001F', () => {
    expect(FINGERPRINT_SEPARATOR).toBe('\u001f');
  });

  describe('does not change when the same call is spelled differently', () => {
    it.each([
      ['key order', '{"service":"api","force":true}', '{"force":true,"service":"api"}'],
      ['nested key order', '{"a":{"y":1,"x":2}}', '{"a":{"x":2,"y":1}}'],
      ['whitespace', '{"service":"api","n":[1,2]}', '{ "service" : "api",\n\t"n" : [ 1 , 2 ] }'],
      ['1.0 vs 1', '{"n":1.0}', '{"n":1}'],
      ['1e2 vs 100', '{"n":1e2}', '{"n":100}'],
      ['1E2 vs 100.00', '{"n":1E2}', '{"n":100.00}'],
      ['escaped vs literal unicode', '{"s":"\\u00e9"}', '{"s":"é"}'],
    ])('%s', (_case, a, b) => {
      expect(fingerprint('t', JSON.parse(a))).toBe(fingerprint('t', JSON.parse(b)));
    });
  });

  describe('changes with any change of what would run', () => {
    const base = { service: 'api', opts: { force: false, ids: [1, 2] } };
    it.each([
      ['a value', { service: 'db', opts: { force: false, ids: [1, 2] } }],
      ['a nested value', { service: 'api', opts: { force: true, ids: [1, 2] } }],
      ['a number', { service: 'api', opts: { force: false, ids: [1, 3] } }],
      ['array order', { service: 'api', opts: { force: false, ids: [2, 1] } }],
      ['nesting', { service: 'api', force: false, ids: [1, 2] }],
      ['an added key', { ...base, extra: null }],
      ['a value type', { service: 'api', opts: { force: 'false', ids: [1, 2] } }],
    ])('%s', (_case, changed) => {
      expect(fingerprint('restart_service', changed)).not.toBe(fingerprint('restart_service', base));
    });

    it('the tool name', () => {
      expect(fingerprint('stop_service', base)).not.toBe(fingerprint('restart_service', base));
    });

    it('moving characters between the name and the arguments', () => {
      expect(fingerprint('a', { b: 1 })).not.toBe(fingerprint('a{', { b: 1 }));
    });
  });

  describe('canonicalJson', () => {
    it.each([
      ['NaN', { n: NaN }],
      ['Infinity', { n: Infinity }],
      ['undefined at the root', undefined],
    ])('throws for %s, which JSON cannot carry', (_case, value) => {
      expect(() => canonicalJson(value)).toThrow();
    });
  });

  it('printableReadableForm makes the separator visible', () => {
    expect(printableReadableForm('restart_service', { service: 'api' })).toBe(
      'restart_service ␟ {"service":"api"}',
    );
  });
});
