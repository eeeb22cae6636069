// The include step of Lua scripts: what it inlines, once, where; and how it fails.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LuaScript } from './lua';
import { LuaIncludeError, readLuaSource } from './lua-source';

describe('readLuaSource', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lua-source-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes files under `<dir>/lua/`. */
  const write = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) {
      const path = join(dir, 'lua', name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    }
  };

  it('replaces an include line with the file, in place, whatever the spelling of the directive', () => {
    write({
      'go-0.lua': [
        '--[[ header ]]',
        '--- @include "includes/a"',
        "-- @include 'includes/b.lua'",
        'return a() + b()',
        '',
      ].join('\n'),
      'includes/a.lua': 'local function a() return 1 end\n',
      'includes/b.lua': 'local function b() return 2 end\n',
    });
    expect(readLuaSource(dir, 'go-0.lua').text).toBe(
      [
        '--[[ header ]]',
        'local function a() return 1 end',
        'local function b() return 2 end',
        'return a() + b()',
        '',
      ].join('\n'),
    );
  });

  it('inlines a file once, where it is first included, however often it is included', () => {
    write({
      'go-0.lua': [
        '--- @include "includes/now"',
        '--- @include "includes/twice"',
        '--- @include "includes/now"',
        'return now()',
      ].join('\n'),
      'includes/now.lua': 'local function now() return 1 end\n',
      // Relative to the including file.
      'includes/twice.lua': '--- @include "now"\nlocal function twice() return 2 * now() end\n',
    });
    const { text } = readLuaSource(dir, 'go-0.lua');
    expect(text).toBe(
      [
        'local function now() return 1 end',
        'local function twice() return 2 * now() end',
        'return now()',
      ].join('\n'),
    );
  });

  it('inlines an include of an include before the file that includes it', () => {
    write({
      'go-0.lua': '--- @include "includes/outer"\nreturn outer()',
      'includes/outer.lua': '--- @include "inner"\nlocal function outer() return inner() end\n',
      'includes/inner.lua': 'local function inner() return 1 end\n',
    });
    expect(readLuaSource(dir, 'go-0.lua').text).toBe(
      'local function inner() return 1 end\nlocal function outer() return inner() end\nreturn outer()',
    );
  });

  it('maps every line of the resolved script to the file and line it was written at, and its path', () => {
    write({
      'go-0.lua': '--[[\n  KEYS[1] k\n]]\n--- @include "includes/a"\nreturn a()\n',
      'includes/a.lua': '-- a snippet\nlocal function a() return 1 end\n',
    });
    const { text, origins } = readLuaSource(dir, 'go-0.lua');
    expect(text.split('\n')).toHaveLength(origins.length);
    expect(origins[3].path).toBe(join(dir, 'lua', 'includes', 'a.lua'));
    expect(origins.map(({ file, line }) => ({ file, line }))).toEqual([
      // The contract header keeps its line numbers: includes come after it.
      { file: 'go-0.lua', line: 1 },
      { file: 'go-0.lua', line: 2 },
      { file: 'go-0.lua', line: 3 },
      { file: join('includes', 'a.lua'), line: 1 },
      { file: join('includes', 'a.lua'), line: 2 },
      { file: 'go-0.lua', line: 5 },
      { file: 'go-0.lua', line: 6 },
    ]);
  });

  it('fails on a missing include, naming the including file and line and the missing file', () => {
    write({
      'go-0.lua': 'local x = 1\n--- @include "includes/helpers"\nreturn x',
      'includes/other.lua': '',
    });
    expect(() => readLuaSource(dir, 'go-0.lua')).toThrow(LuaIncludeError);
    expect(() => readLuaSource(dir, 'go-0.lua')).toThrow(
      `go-0.lua:2: @include "includes/helpers": no such file ${join('includes', 'helpers.lua')}`,
    );
  });

  it('fails on a missing include inside an include, naming the include', () => {
    write({
      'go-0.lua': '--- @include "includes/a"\nreturn a()',
      'includes/a.lua': '\n--- @include "gone"\nlocal function a() return 1 end\n',
    });
    expect(() => readLuaSource(dir, 'go-0.lua')).toThrow(
      `${join('includes', 'a.lua')}:2: @include "gone": no such file`,
    );
  });

  it('fails on a cycle, naming it', () => {
    write({
      'go-0.lua': '--- @include "includes/a"\nreturn 1',
      'includes/a.lua': '--- @include "b"\n',
      'includes/b.lua': '--- @include "a"\n',
    });
    expect(() => readLuaSource(dir, 'go-0.lua')).toThrow(
      `is circular (go-0.lua -> ${join('includes', 'a.lua')} -> ${join('includes', 'b.lua')} -> ${join('includes', 'a.lua')})`,
    );
  });

  it("refuses an include outside the script's lua/ folder", () => {
    write({ 'go-0.lua': '--- @include "../elsewhere"\nreturn 1' });
    writeFileSync(join(dir, 'elsewhere.lua'), 'local y = 2\n');
    expect(() => readLuaSource(dir, 'go-0.lua')).toThrow(
      `go-0.lua:1: @include "../elsewhere" leaves the script's lua/ folder`,
    );
  });

  it('leaves a script without includes as it is', () => {
    const text = '--[[ header ]]\n-- @includes are not mentioned here\nreturn 1\n';
    write({ 'go-0.lua': text });
    expect(readLuaSource(dir, 'go-0.lua').text).toBe(text);
  });

  it('gives LuaScript the resolved text, and its SHA is of that text', () => {
    write({
      'go-1.lua': '--- @include "includes/a"\nreturn a()',
      'includes/a.lua': 'local function a() return KEYS[1] end\n',
    });
    const sut = LuaScript.load(dir, 'go-1.lua');
    expect(sut.source).toBe('local function a() return KEYS[1] end\nreturn a()');
    expect(sut.sha).toBe(createHash('sha1').update(sut.source).digest('hex'));
    expect(sut.numberOfKeys).toBe(1);
  });

  it("inlines a library's snippet named @countersign/<lib>/<name>, and names its lines by that name", () => {
    write({ 'go-1.lua': '--- @include "@countersign/call-ledger/call-ledger"\nreturn 1' });
    const source = readLuaSource(dir, 'go-1.lua');
    expect(source.text).toContain('local function ledgerClaim(');
    expect(source.origins[0].file).toBe('@countersign/call-ledger/call-ledger.lua');
    expect(source.origins.at(-1)).toEqual({ file: 'go-1.lua', line: 2, path: join(dir, 'lua', 'go-1.lua') });
  });

  it('inlines a snippet of another feature of the same app, named @app/<feature>/<name>, and names its lines so', () => {
    const app = join(dir, 'src');
    const script = join(app, 'votes', 'lua', 'go-1.lua');
    const snippet = join(app, 'requests', 'lua', 'includes', 'states.lua');
    for (const path of [script, snippet]) mkdirSync(dirname(path), { recursive: true });
    writeFileSync(script, '--- @include "@app/requests/states"\nreturn settle()');
    // A snippet's own relative include stays in its folder.
    writeFileSync(snippet, '--- @include "timer"\nlocal function settle() return timer() end\n');
    writeFileSync(join(dirname(snippet), 'timer.lua'), 'local function timer() return 1 end\n');
    const source = readLuaSource(join(app, 'votes'), 'go-1.lua');
    expect(source.text).toBe(
      'local function timer() return 1 end\nlocal function settle() return timer() end\nreturn settle()',
    );
    expect(source.origins[1]).toEqual({ file: '@app/requests/states.lua', line: 2, path: snippet });
  });

  it('refuses an app include that leaves the feature lua/includes/ folder, or from a script in no app src/ folder', () => {
    const app = join(dir, 'src');
    mkdirSync(join(app, 'votes', 'lua'), { recursive: true });
    mkdirSync(join(app, 'requests', 'lua'), { recursive: true });
    writeFileSync(join(app, 'requests', 'lua', 'go-1.lua'), 'return 1\n');
    writeFileSync(join(app, 'votes', 'lua', 'out-0.lua'), '--- @include "@app/requests/../go-1"\nreturn 1');
    expect(() => readLuaSource(join(app, 'votes'), 'out-0.lua')).toThrow(/leaves the script's lua\/ folder/);
    write({ 'lost-0.lua': '--- @include "@app/requests/states"\nreturn 1' });
    expect(() => readLuaSource(dir, 'lost-0.lua')).toThrow(/@app\/ names a feature of the app/);
  });

  it('refuses a library include that leaves the library lua/ folder, or names no file', () => {
    write({
      'out-0.lua': '--- @include "@countersign/call-ledger/../../platform/src/lua/audit-append-2"\nreturn 1',
      'none-0.lua': '--- @include "@countersign/call-ledger/no-such"\nreturn 1',
    });
    expect(() => readLuaSource(dir, 'out-0.lua')).toThrow(/leaves the script's lua\/ folder/);
    expect(() => readLuaSource(dir, 'none-0.lua')).toThrow(/no such file no-such.lua/);
  });
});
