// Reads a Lua script and inlines the snippets it includes, the way BullMQ's script loader does, so scripts share
// helpers (Redis TIME in ms, owner checks, ...) while Redis still gets one self-contained script per command.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** BullMQ's directive: `--- @include "includes/<name>"` (two or three dashes, either quote, `.lua` optional). */
const INCLUDE = /^-{2,3}[ \t]*@include[ \t]+(["'])(.+?)\1[ \t;]*$/;

/**
 * A library's shared snippets: `--- @include "@countersign/<lib>/<name>"` is `libs/<lib>/src/lua/includes/<name>.lua` (so the
 * call ledger's transitions are written once, in libs/call-ledger, and included by every app's scripts). Found from
 * this file's own place, which is libs/platform/src both in the sources and in dist/.
 */
const LIBRARY_INCLUDE = /^@countersign\/([a-z][a-z0-9-]*)\/(.+)$/;
const LIBS_ROOT = resolve(__dirname, '..', '..');

/**
 * A snippet another feature of the same app shares: `--- @include "@app/<feature>/<name>"` is
 * `<src>/<feature>/lua/includes/<name>.lua`, `<src>` being the `src/` folder the including script sits in (so the
 * approval service's request states are written once, in requests/, and included by the votes' and timers' scripts).
 */
const APP_INCLUDE = /^@app\/([a-z][a-z0-9-]*)\/(.+)$/;

/** Where one line of a resolved script was written: a file (relative to the script's folder) and its line. */
export interface LuaOrigin {
  file: string;
  line: number;
  /** The file's absolute path. */
  path: string;
}

export interface LuaSource {
  /** The script with every include inlined: what Redis runs, and what its SHA is of. */
  text: string;
  /** `origins[n - 1]` is where line n of `text` was written, so an error Redis reports can name the file. */
  origins: LuaOrigin[];
}

/** An include that cannot be resolved; the message names the including file and line. */
export class LuaIncludeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

/**
 * Reads `<dir>/lua/<file>` and replaces each `@include` line with the included file, recursively. A path is
 * relative to the file that includes it and must stay inside the script's `lua/` folder, or names a library's
 * snippet (`@countersign/<lib>/<name>`, see LIBRARY_INCLUDE) or another feature's of the same app (`@app/<feature>/<name>`,
 * see APP_INCLUDE). Each file is inlined
 * once, where it is first included; a later include of the same file (by the script or by another include)
 * adds nothing, so two snippets may both include a third. Including a file that is being inlined (a cycle)
 * is an error, and so is a missing file.
 */
export function readLuaSource(dir: string, file: string): LuaSource {
  const root = join(dir, 'lua');
  const out: LuaSource = { text: '', origins: [] };
  const lines: string[] = [];
  inline(root, join(root, file), [], new Set(), lines, out.origins, true);
  out.text = lines.join('\n');
  return out;
}

function inline(
  root: string,
  path: string,
  stack: string[],
  inlined: Set<string>,
  lines: string[],
  origins: LuaOrigin[],
  top: boolean,
): void {
  const name = displayName(root, path);
  const own = readFileSync(path, 'utf8').split('\n');
  // An include's final newline would leave an empty line behind; the script's own text is kept as written.
  if (!top && own.at(-1) === '') own.pop();
  own.forEach((text, index) => {
    const directive = INCLUDE.exec(text);
    if (!directive) {
      lines.push(text);
      origins.push({ file: name, line: index + 1, path });
      return;
    }
    const where = `${name}:${index + 1}`;
    const wanted = directive[2];
    const file = wanted.endsWith('.lua') ? wanted : `${wanted}.lua`;
    const { base, target } = includeTarget(root, path, file, where);
    const fromRoot = relative(base, target);
    if (fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot))
      throw new LuaIncludeError(`${where}: @include "${wanted}" leaves the script's lua/ folder`);
    if (target === path || stack.includes(target))
      throw new LuaIncludeError(
        `${where}: @include "${wanted}" is circular (${[...stack, path, target].map((p) => displayName(root, p)).join(' -> ')})`,
      );
    if (inlined.has(target)) return;
    if (!existsSync(target))
      throw new LuaIncludeError(`${where}: @include "${wanted}": no such file ${fromRoot} in ${base}`);
    inlined.add(target);
    inline(root, target, [...stack, path], inlined, lines, origins, false);
  });
}

/** Where an include directive points: the folder it must stay inside, and the file. */
function includeTarget(
  root: string,
  path: string,
  file: string,
  where: string,
): { base: string; target: string } {
  const library = LIBRARY_INCLUDE.exec(file);
  if (library) {
    const base = join(LIBS_ROOT, library[1], 'src', 'lua', 'includes');
    return { base, target: resolve(base, library[2]) };
  }
  const app = APP_INCLUDE.exec(file);
  // Relative to the including file, inside its own folder: the script's lua/, or a snippet's includes/ elsewhere.
  if (!app) {
    const inRoot = !relative(root, path).startsWith(`..${sep}`);
    return { base: inRoot ? root : dirname(path), target: resolve(dirname(path), file) };
  }
  const src = appSource(root);
  if (!src)
    throw new LuaIncludeError(
      `${where}: @include "${file}": @app/ names a feature of the app, but this script is in no src/ folder`,
    );
  const base = join(src, app[1], 'lua', 'includes');
  return { base, target: resolve(base, app[2]) };
}

/** The `src/` folder a script's lua/ folder is in (an app's or a library's sources), if any. */
function appSource(root: string): string | undefined {
  for (let dir = dirname(root); dir !== dirname(dir); dir = dirname(dir))
    if (basename(dir) === 'src') return dir;
  return undefined;
}

/**
 * A file of the script's own lua/ folder by its path there; a library's snippet as `@countersign/<lib>/<file>`;
 * another feature's snippet as `@app/<feature>/<file>`.
 */
function displayName(root: string, path: string): string {
  const own = relative(root, path);
  if (!own.startsWith(`..${sep}`)) return own;
  const src = appSource(root);
  const inApp = src ? relative(src, path) : `..${sep}`;
  if (!inApp.startsWith(`..${sep}`)) {
    const [feature, , , ...rest] = inApp.split(sep);
    return `@app/${feature}/${rest.join('/')}`;
  }
  const [lib, , , , ...rest] = relative(LIBS_ROOT, path).split(sep);
  return `@countersign/${lib}/${rest.join('/')}`;
}
