// A Cedar policy set as a CallPolicy: loaded from a directory (`schema.cedarschema` + `*.cedar`), validated against the
// schema once at start-up, then asked for each call: principal `Principal::"<id>"` (in its `Group`s from the principal
// directory), action `Action::"call"`, resource `Call` with `tool` and `args`, context `{ agent }`. Forbid beats permit,
// no permit is a refusal, and any evaluation error refuses the call (fail closed). A permit's annotations say what
// JSON tiers and routing say: `@tier("confirm")`, `@groups("finance")`, `@quorum("2")`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import {
  type CallPolicy,
  type CallPolicyInput,
  type CallPolicyVerdict,
  type PolicyMention,
  stricter,
  TIER_RANK,
} from '@countersign/authorization';
import { IdSchema, TierSchema, type Tier } from '@countersign/contracts';

export const SCHEMA_FILE = 'schema.cedarschema';
const MAX_QUORUM = 16;
const MAX_GROUPS = 16;

/** A policy set that cannot be used: the message names the file, line and policy. */
export class PolicyLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

/** A call the set cannot evaluate (an argument Cedar cannot read, a policy that errs): the call is refused. */
export class PolicyEvaluationError extends Error {
  constructor(
    message: string,
    readonly policy?: PolicyMention,
  ) {
    super(message);
    this.name = this.constructor.name;
  }
}

/** Who a call acts for, as the principal directory knows them. */
export interface PolicyPrincipal {
  id: string;
  kind?: string;
  /** Its `policyGroups` in the principal directory. */
  policyGroups?: readonly string[];
}

/** One policy of the set, with what its annotations say. */
export interface LoadedPolicy {
  id: string;
  effect: 'permit' | 'forbid';
  file: string;
  line: number;
  /** The `when`/`unless` clauses as written (or its scope when it has none, or its `@reason`). */
  condition: string;
  /** The only tools it can apply to, when its first condition says so (`toolsOf`); absent: any tool. */
  tools?: string[];
  tier?: Tier;
  groups?: string[];
  quorum?: number;
}

let preparsedSets = 0;

export class CedarPolicySet implements CallPolicy {
  readonly name: string;
  private readonly byId: ReadonlyMap<string, LoadedPolicy>;
  private readonly principals: ReadonlyMap<string, PolicyPrincipal>;
  /** The pre-parsed set asked about each tool a policy names first (see `toolsOf`), and the one for every other tool. */
  private readonly setIds = new Map<string, string>();
  private readonly otherToolsSetId: string;

  private constructor(
    readonly directory: string,
    readonly policies: readonly LoadedPolicy[],
    texts: Record<string, string>,
    principals: readonly PolicyPrincipal[],
    indexByTool: boolean,
  ) {
    this.name = `cedar ${directory}`;
    this.byId = new Map(policies.map((p) => [p.id, p]));
    this.principals = new Map(principals.map((p) => [p.id, p]));
    // Cedar evaluates every policy of a set (about 1.3 µs each, besides a fixed ~40 µs per request): a call is asked
    // of the policies that can apply to its tool only. Leaving out a policy whose first condition is false for the
    // tool changes nothing: Cedar's `&&` stops there, so that policy could neither match nor fail.
    const preparse = (subset: readonly LoadedPolicy[]) => {
      const id = `countersign-${++preparsedSets}`;
      const parsed = cedar.preparsePolicySet(id, {
        staticPolicies: Object.fromEntries(subset.map((p) => [p.id, texts[p.id]])),
      });
      if (parsed.type !== 'success') throw new PolicyLoadError(`${directory}: ${errorsText(parsed.errors)}`);
      return id;
    };
    const forAnyTool = indexByTool ? policies.filter((p) => !p.tools) : policies;
    this.otherToolsSetId = preparse(forAnyTool);
    if (!indexByTool) return;
    for (const tool of new Set(policies.flatMap((p) => p.tools ?? [])))
      this.setIds.set(tool, preparse(policies.filter((p) => !p.tools || p.tools.includes(tool))));
  }

  /**
   * Reads and validates the set in `directory`. Throws a PolicyLoadError naming the file, line and policy of the first
   * problem: a file that does not parse, a policy the schema refuses, a bad or misplaced annotation, a repeated ID.
   */
  static load(directory: string, principals: readonly PolicyPrincipal[]): CedarPolicySet {
    let files: string[];
    let schema: string;
    try {
      files = readdirSync(directory)
        .filter((f) => f.endsWith('.cedar'))
        .sort();
      schema = readFileSync(join(directory, SCHEMA_FILE), 'utf8');
    } catch (error) {
      throw new PolicyLoadError(`${directory}: cannot be read (${(error as Error).message})`);
    }
    if (files.length === 0) throw new PolicyLoadError(`${directory}: holds no *.cedar policy file`);
    const sources = files.map((file) => ({
      file: join(directory, file),
      text: readFileSync(join(directory, file), 'utf8'),
    }));
    return CedarPolicySet.fromSources(directory, schema, sources, principals);
  }

  /** As `load`, from texts: `sources` are the policy files (name and text) in order. */
  static fromSources(
    directory: string,
    schema: string,
    sources: readonly { file: string; text: string }[],
    principals: readonly PolicyPrincipal[],
    /** Ask a call only of the policies that can apply to its tool. @defaultValue true (false: tests compare) */
    indexByTool = true,
  ): CedarPolicySet {
    const schemaCheck = cedar.checkParseSchema(schema);
    if (schemaCheck.type !== 'success')
      throw new PolicyLoadError(
        `${join(directory, SCHEMA_FILE)}${lineOf(schema, firstStart(schemaCheck.errors))}: ${errorsText(schemaCheck.errors)}`,
      );
    const policies: LoadedPolicy[] = [];
    const texts: Record<string, string> = {};
    const starts = new Map<string, { file: string; text: string; offset: number }>();
    for (const { file, text } of sources) {
      const parsed = cedar.checkParsePolicySet({ staticPolicies: text });
      if (parsed.type !== 'success')
        throw new PolicyLoadError(
          `${file}${lineOf(text, firstStart(parsed.errors))}: ${errorsText(parsed.errors)}`,
        );
      const parts = cedar.policySetTextToParts(text);
      if (parts.type !== 'success') throw new PolicyLoadError(`${file}: ${errorsText(parts.errors)}`);
      if (parts.policy_templates.length > 0)
        throw new PolicyLoadError(`${file}: templates are not supported`);
      let from = 0;
      parts.policies.forEach((policyText, index) => {
        const offset = Math.max(text.indexOf(policyText, from), 0);
        from = offset + policyText.length;
        const line = lineNumber(text, offset);
        const loaded = describePolicy(policyText, file, line, index);
        if (texts[loaded.id] !== undefined)
          throw new PolicyLoadError(`${file}:${line}: policy "${loaded.id}": the ID is used twice`);
        texts[loaded.id] = policyText;
        starts.set(loaded.id, { file, text, offset });
        policies.push(loaded);
      });
    }
    const validation = cedar.validate({ schema, policies: { staticPolicies: texts } });
    if (validation.type !== 'success')
      throw new PolicyLoadError(
        `${directory}: the schema cannot check the policies: ${errorsText(validation.errors)}`,
      );
    const [problem] = validation.validationErrors;
    if (problem) {
      const at = starts.get(problem.policyId);
      const where = at
        ? `${at.file}:${lineNumber(at.text, at.offset + (problem.error.sourceLocations?.[0]?.start ?? 0))}`
        : directory;
      throw new PolicyLoadError(`${where}: policy "${problem.policyId}": ${detailText(problem.error)}`);
    }
    return new CedarPolicySet(directory, policies, texts, principals, indexByTool);
  }

  /** The policy with this ID. */
  policy(id: string): LoadedPolicy | undefined {
    return this.byId.get(id);
  }

  /** The set's verdict; any error is a refusal that says why (fail closed). Never throws. */
  decide(input: CallPolicyInput): CallPolicyVerdict {
    try {
      return this.evaluate(input);
    } catch (error) {
      const { message, policy } = error as PolicyEvaluationError;
      return { allowed: false, reason: message, ...(policy ? { policy } : {}) };
    }
  }

  /** The set's verdict, or a PolicyEvaluationError when the call cannot be evaluated (what a shadow counts). */
  evaluate(input: CallPolicyInput): CallPolicyVerdict {
    let args: CedarValue;
    try {
      args = cedarValue(input.args ?? {}, 'args');
    } catch (error) {
      throw new PolicyEvaluationError(
        `its arguments cannot be read by the Cedar policies: ${(error as Error).message}`,
      );
    }
    const principal = this.principals.get(input.principal);
    const answer = cedar.statefulIsAuthorized({
      principal: { type: 'Principal', id: input.principal },
      action: { type: 'Action', id: 'call' },
      resource: { type: 'Call', id: 'call' },
      context: { agent: input.agent },
      preparsedPolicySetId: this.setIds.get(input.toolName) ?? this.otherToolsSetId,
      validateRequest: false,
      entities: [
        {
          uid: { type: 'Principal', id: input.principal },
          attrs: { kind: principal?.kind ?? 'person' },
          parents: (principal?.policyGroups ?? []).map((id) => ({ type: 'Group', id })),
        },
        { uid: { type: 'Call', id: 'call' }, attrs: { tool: input.toolName, args }, parents: [] },
      ],
    });
    if (answer.type !== 'success')
      throw new PolicyEvaluationError(
        `the Cedar policies could not be evaluated (${errorsText(answer.errors)})`,
      );
    const { decision, diagnostics } = answer.response;
    // The first in file order of the policies that failed, so the reason does not depend on Cedar's order.
    const [failed] = [...diagnostics.errors].sort((a, b) => this.order(a.policyId) - this.order(b.policyId));
    if (failed)
      throw new PolicyEvaluationError(
        `policy ${failed.policyId} failed to evaluate (${failed.error.message})`,
        this.mention(failed.policyId),
      );
    if (decision === 'deny') {
      const forbid = [...diagnostics.reason]
        .sort((a, b) => this.order(a) - this.order(b))
        .map((id) => this.byId.get(id))
        .find((p) => p?.effect === 'forbid');
      if (!forbid) return { allowed: false, reason: 'no Cedar policy permits it' };
      return {
        allowed: false,
        reason: `forbidden by policy ${forbid.id}: ${forbid.condition}`,
        policy: mention(forbid),
      };
    }
    const deciding = strictest(
      diagnostics.reason.map((id) => this.byId.get(id)).filter((p): p is LoadedPolicy => p !== undefined),
    );
    if (!deciding) return { allowed: false, reason: 'no Cedar policy permits it' };
    return {
      allowed: true,
      tier: stricter(input.tier, deciding.tier ?? input.tier),
      ...(deciding.groups ? { groups: deciding.groups } : {}),
      ...(deciding.quorum ? { quorum: deciding.quorum } : {}),
      policy: mention(deciding),
    };
  }

  private order(id: string): number {
    return this.policies.findIndex((p) => p.id === id);
  }

  private mention(id: string): PolicyMention | undefined {
    const policy = this.byId.get(id);
    return policy && mention(policy);
  }
}

function mention(policy: LoadedPolicy): PolicyMention {
  return { id: policy.id, condition: policy.condition };
}

/**
 * Of the permits that matched, the one that decides: the strictest tier, then the highest quorum, then one naming
 * groups, then the first in file order. So adding a permit can make a call stricter, never laxer than another's.
 */
export function strictest(permits: readonly LoadedPolicy[]): LoadedPolicy | undefined {
  const rank = (p: LoadedPolicy) => [TIER_RANK[p.tier ?? 'auto'], p.quorum ?? 0, p.groups ? 1 : 0];
  let best: LoadedPolicy | undefined;
  for (const p of permits) {
    if (!best) {
      best = p;
      continue;
    }
    const [a, b] = [rank(p), rank(best)];
    const i = a.findIndex((x, k) => x !== b[k]);
    if (i >= 0 && a[i] > b[i]) best = p;
  }
  return best;
}

/** A policy's ID, effect, annotations and condition; throws a PolicyLoadError for a bad annotation. */
export function describePolicy(text: string, file: string, line: number, index: number): LoadedPolicy {
  const json = cedar.policyToJson(text);
  if (json.type !== 'success') throw new PolicyLoadError(`${file}:${line}: ${errorsText(json.errors)}`);
  const notes = (json.json.annotations ?? {}) as Record<string, string | null>;
  const id = notes.id ?? `${file.split('/').pop()}@${index}`;
  const where = `${file}:${line}: policy "${id}"`;
  if (!IdSchema.safeParse(id).success) throw new PolicyLoadError(`${where}: @id must be a plain ID`);
  const effect = json.json.effect;
  const policy: LoadedPolicy = {
    id,
    effect,
    file,
    line,
    condition: notes.reason ?? conditionText(text),
  };
  const tools = toolsOf(json.json.conditions as unknown[]);
  if (tools) policy.tools = tools;
  const routing = ['tier', 'groups', 'quorum'].filter((k) => notes[k] !== undefined);
  if (effect === 'forbid' && routing.length > 0)
    throw new PolicyLoadError(`${where}: @${routing[0]} belongs on a permit (a forbid refuses the call)`);
  if (notes.tier !== undefined) {
    const tier = TierSchema.safeParse(notes.tier);
    if (!tier.success)
      throw new PolicyLoadError(
        `${where}: @tier must be auto, confirm or manual_only (got ${JSON.stringify(notes.tier)})`,
      );
    policy.tier = tier.data;
  }
  if (notes.groups !== undefined) {
    const groups = (notes.groups ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean);
    if (
      groups.length === 0 ||
      groups.length > MAX_GROUPS ||
      groups.some((g) => !IdSchema.safeParse(g).success)
    )
      throw new PolicyLoadError(`${where}: @groups must list 1 to ${MAX_GROUPS} group IDs, comma-separated`);
    policy.groups = groups;
  }
  if (notes.quorum !== undefined) {
    const quorum = Number(notes.quorum);
    if (!/^\d+$/.test(notes.quorum ?? '') || quorum < 1 || quorum > MAX_QUORUM)
      throw new PolicyLoadError(`${where}: @quorum must be a whole number from 1 to ${MAX_QUORUM}`);
    policy.quorum = quorum;
  }
  return policy;
}

/**
 * The tools a policy can apply to, when the first conjunct of its first condition (a `when`) is
 * `resource.tool == "x"` (either way round) or `["x", "y"].contains(resource.tool)`; undefined otherwise. Cedar
 * evaluates a policy's conditions in order and stops `&&` at the first false operand, so for any other tool the
 * policy is false before anything that could fail is evaluated.
 */
export function toolsOf(conditions: readonly unknown[]): string[] | undefined {
  const first = conditions[0];
  if (at(first, 'kind') !== 'when') return undefined;
  let expr = at(first, 'body');
  while (at(expr, '&&')) expr = at(at(expr, '&&'), 'left');
  const isTool = (e: unknown) =>
    at(at(e, '.'), 'attr') === 'tool' && at(at(at(e, '.'), 'left'), 'Var') === 'resource';
  const literal = (e: unknown) => {
    const value = at(e, 'Value');
    return typeof value === 'string' ? value : undefined;
  };
  const eq = at(expr, '==');
  if (eq) {
    const [left, right] = [at(eq, 'left'), at(eq, 'right')];
    const value = isTool(left) ? literal(right) : isTool(right) ? literal(left) : undefined;
    return value === undefined ? undefined : [value];
  }
  const contains = at(expr, 'contains');
  const set = at(at(contains, 'left'), 'Set');
  if (contains && isTool(at(contains, 'right')) && Array.isArray(set)) {
    const values = set.map(literal);
    return values.every((v): v is string => v !== undefined) ? values : undefined;
  }
  return undefined;
}

/** A field of a JSON object (undefined for anything else). */
function at(node: unknown, key: string): unknown {
  return node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
}

/**
 * The `when`/`unless` clauses of a policy as written, whitespace collapsed (`resource.args.amount > 1000`); the scope
 * when it has none (`principal == Principal::"mallory"`).
 */
export function conditionText(text: string): string {
  const code = maskComments(text);
  const open = firstCode(code, /\b(permit|forbid)\s*\(/);
  if (open < 0) return squash(text);
  const scopeStart = code.indexOf('(', open);
  const scopeEnd = matching(code, scopeStart, '(', ')');
  const clauses: string[] = [];
  const clause = /\b(when|unless)\s*\{/g;
  clause.lastIndex = scopeEnd + 1;
  for (let m = clause.exec(code); m; m = clause.exec(code)) {
    const start = code.indexOf('{', m.index);
    const end = matching(code, start, '{', '}');
    const body = squash(text.slice(start + 1, end));
    clauses.push(m[1] === 'when' ? body : `unless ${body}`);
    clause.lastIndex = end + 1;
  }
  if (clauses.length > 0) return clauses.join(' and ');
  const scope = squash(text.slice(scopeStart + 1, scopeEnd));
  return scope.replace(/^principal, action, resource$/, 'every call');
}

/** The text with comments and string contents blanked (same length), so brackets are found in code only. */
function maskComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += '"' + ' '.repeat(Math.max(j - i - 1, 0)) + (j < text.length ? '"' : '');
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      let j = i;
      while (j < text.length && text[j] !== '\n') j++;
      out += ' '.repeat(j - i);
      i = j - 1;
    } else out += c;
  }
  return out;
}

function firstCode(code: string, pattern: RegExp): number {
  return code.search(pattern);
}

function matching(code: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < code.length; i++) {
    if (code[i] === open) depth++;
    else if (code[i] === close && --depth === 0) return i;
  }
  return code.length;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

type CedarValue = string | number | boolean | CedarValue[] | { [key: string]: CedarValue };

/**
 * A JSON argument as Cedar reads it: strings, booleans, whole numbers, sets and records. A null field is left out
 * (`has` is then false); a fraction or a key starting with `__` (Cedar's escapes: an argument could pose as an entity)
 * cannot be read, which refuses the call.
 */
export function cedarValue(value: unknown, path: string): CedarValue {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`${path} is ${value}: Cedar reads only whole numbers`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => cedarValue(v, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    const record: Record<string, CedarValue> = {};
    for (const [key, v] of Object.entries(value)) {
      if (key.startsWith('__')) throw new Error(`${path}.${key}: a key starting with "__" cannot be read`);
      if (v === null || v === undefined) continue;
      record[key] = cedarValue(v, `${path}.${key}`);
    }
    return record;
  }
  throw new Error(`${path} is ${value === null ? 'null' : typeof value}, which Cedar cannot read`);
}

function lineNumber(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') line++;
  return line;
}

function lineOf(text: string, offset: number | undefined): string {
  return offset === undefined ? '' : `:${lineNumber(text, offset)}`;
}

function firstStart(errors: readonly cedar.DetailedError[]): number | undefined {
  return errors.flatMap((e) => e.sourceLocations ?? [])[0]?.start;
}

function detailText(error: cedar.DetailedError): string {
  const label = error.sourceLocations?.find((l) => l.label)?.label;
  return [error.message, label, error.help].filter(Boolean).join('; ');
}

function errorsText(errors: readonly cedar.DetailedError[]): string {
  return errors.map(detailText).join('; ') || 'unknown error';
}
