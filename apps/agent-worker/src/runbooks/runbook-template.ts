// The runbook's templates: `{{state.a.b}}` is a dotted-path lookup into the state and nothing else (no expressions,
// no eval), so a definition can never run code. A value that is one template keeps its type; inside text it is text.
import { builtInNameProblem } from '@countersign/contracts';

const TEMPLATE = /\{\{\s*([^}]*?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^}]*?)\s*\}\}$/;
const STATE_PATH = /^state\.([a-zA-Z0-9_-]+)(\.[a-zA-Z0-9_-]+)*$/;

export class TemplateError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`field "${field}": ${message}`);
    this.name = this.constructor.name;
  }
}

/** Looks up `a.b.c` in `value`; undefined when any step is missing. */
export function lookup(value: unknown, dotted: string): unknown {
  let current = value;
  for (const key of dotted.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Every template in `value` (strings anywhere inside it), by the channel it reads, or an error for a bad one. */
export function templateRoots(
  value: unknown,
  field: string,
): ({ field: string; channel: string } | { field: string; error: string })[] {
  if (typeof value === 'string')
    return [...value.matchAll(TEMPLATE)].map((m) => {
      const path = STATE_PATH.exec(m[1]);
      if (!path)
        return {
          field,
          error: `template "${m[0]}" must be a dotted path into the state, e.g. {{state.service}}`,
        };
      const builtIn = m[1].split('.').map(builtInNameProblem).find(Boolean);
      return builtIn ? { field, error: `template "${m[0]}": ${builtIn}` } : { field, channel: path[1] };
    });
  if (Array.isArray(value)) return value.flatMap((v, i) => templateRoots(v, `${field}.${i}`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => templateRoots(v, `${field}.${k}`));
  return [];
}

/** `value` with its templates filled from `state`; a template whose path is not set throws, naming the field. */
export function render(value: unknown, state: Record<string, unknown>, field: string): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return read(state, whole[1], field);
    return value.replace(TEMPLATE, (_, path: string) => {
      const found = read(state, path, field);
      return typeof found === 'string' ? found : JSON.stringify(found);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => render(v, state, `${field}.${i}`));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, state, `${field}.${k}`)]));
  return value;
}

function read(state: Record<string, unknown>, path: string, field: string): unknown {
  if (!STATE_PATH.test(path))
    throw new TemplateError(field, `"{{${path}}}" is not a dotted path into the state`);
  const found = lookup({ state }, path);
  if (found === undefined) throw new TemplateError(field, `{{${path}}} is not set`);
  return found;
}
