// Runbook definitions: read (YAML or JSON), checked field by field with zod and then as a graph, and kept by name.
// Every error names the runbook, the node and the field, so a bad file is fixed without reading this code.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import {
  builtInNameProblem,
  type RunbookDefinition,
  RunbookDefinitionSchema,
  type RunbookNode,
} from '@countersign/contracts';
import { ConfigError } from '@countersign/platform';
import { own } from './own';
import { templateRoots } from './runbook-template';

/** One or more problems of one definition, each line naming node and field. */
export class InvalidRunbookError extends Error {
  constructor(readonly issues: string[]) {
    super(issues.join('\n'));
    this.name = this.constructor.name;
  }
}

const RUNBOOK_FILE = /\.(ya?ml|json)$/i;

export class RunbookLibrary {
  private readonly byName = new Map<string, RunbookDefinition>();

  /**
   * RUNBOOKS_DIR's definitions at start-up (none without one): a missing directory or an invalid file refuses to
   * start, with a ConfigError naming the variable, the runbook, the node and the field.
   */
  static load(dir: string | undefined): RunbookLibrary {
    if (!dir) return RunbookLibrary.of([]);
    if (!existsSync(dir)) throw new ConfigError(`RUNBOOKS_DIR: ${dir} does not exist`);
    try {
      return RunbookLibrary.fromDirectory(dir);
    } catch (error) {
      if (error instanceof InvalidRunbookError)
        throw new ConfigError(`RUNBOOKS_DIR: ${dir}:\n${error.message}`);
      throw error;
    }
  }

  /** Every `*.yaml`, `*.yml` and `*.json` file of `dir`; any invalid file refuses them all. */
  static fromDirectory(dir: string): RunbookLibrary {
    const root = resolve(dir);
    const files = readdirSync(root)
      .filter((f) => RUNBOOK_FILE.test(f) && statSync(join(root, f)).isFile())
      .sort();
    const definitions = files.map((file) => parseRunbook(readFileSync(join(root, file), 'utf8'), file));
    return RunbookLibrary.of(definitions);
  }

  /** Checks the definitions together (sub-runbooks named exist, no sub-runbook cycles). */
  static of(definitions: RunbookDefinition[]): RunbookLibrary {
    const library = new RunbookLibrary();
    const issues: string[] = [];
    for (const definition of definitions) {
      if (library.byName.has(definition.name)) issues.push(`runbook ${definition.name}: defined twice`);
      library.byName.set(definition.name, definition);
    }
    for (const definition of definitions) issues.push(...library.crossIssues(definition));
    if (issues.length > 0) throw new InvalidRunbookError(issues);
    return library;
  }

  get(name: string): RunbookDefinition | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** A definition submitted on its own, checked against this library's runbooks (for its sub-runbooks). */
  check(raw: unknown): RunbookDefinition {
    const definition = parseDefinition(raw, 'submitted definition');
    const issues = this.crossIssues(definition, new Map([[definition.name, definition]]));
    if (issues.length > 0) throw new InvalidRunbookError(issues);
    return definition;
  }

  private crossIssues(
    definition: RunbookDefinition,
    extra: Map<string, RunbookDefinition> = new Map(),
  ): string[] {
    const lookup = (name: string) => extra.get(name) ?? this.byName.get(name);
    const issues: string[] = [];
    for (const [id, node] of Object.entries(definition.nodes)) {
      if (node.kind !== 'runbook') continue;
      if (!lookup(node.runbook)) {
        issues.push(
          `runbook ${definition.name}: node "${id}": field "runbook": no runbook "${node.runbook}" (known: ${[...this.byName.keys()].join(', ') || 'none'})`,
        );
        continue;
      }
      const cycle = subRunbookCycle(definition.name, node.runbook, lookup);
      if (cycle)
        issues.push(
          `runbook ${definition.name}: node "${id}": field "runbook": sub-runbooks form a cycle (${cycle.join(' → ')})`,
        );
    }
    return issues;
  }
}

/** The cycle of sub-runbooks that leads from `via` back to `start`, if there is one. */
function subRunbookCycle(
  start: string,
  via: string,
  lookup: (name: string) => RunbookDefinition | undefined,
  seen: string[] = [start],
): string[] | undefined {
  if (via === start) return [...seen, via];
  if (seen.includes(via)) return undefined;
  const definition = lookup(via);
  if (!definition) return undefined;
  for (const node of Object.values(definition.nodes)) {
    if (node.kind !== 'runbook') continue;
    const cycle = subRunbookCycle(start, node.runbook, lookup, [...seen, via]);
    if (cycle) return cycle;
  }
  return undefined;
}

/** A file's text (YAML, of which JSON is a subset) as a checked definition; `source` names it in errors. */
export function parseRunbook(text: string, source: string): RunbookDefinition {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new InvalidRunbookError([`runbook file ${source}: cannot parse: ${(error as Error).message}`]);
  }
  return parseDefinition(raw, source);
}

function parseDefinition(raw: unknown, source: string): RunbookDefinition {
  const name =
    typeof (raw as { name?: unknown } | null)?.name === 'string' ? (raw as { name: string }).name : source;
  // zod leaves `__proto__` keys out of what it returns without a word: they are refused here, before it runs.
  const protoKeys = protoKeyPaths(raw).map((path) =>
    describeAt(name, path, builtInNameProblem('__proto__')!, { key: true }),
  );
  if (protoKeys.length > 0) throw new InvalidRunbookError(protoKeys);
  const parsed = RunbookDefinitionSchema.safeParse(raw);
  if (!parsed.success) throw new InvalidRunbookError(parsed.error.issues.map((i) => describeIssue(name, i)));
  const issues = graphIssues(parsed.data);
  if (issues.length > 0) throw new InvalidRunbookError(issues);
  return parsed.data;
}

/** Where a JSON or YAML value has an own `__proto__` key (both parsers make it one), as paths. */
function protoKeyPaths(value: unknown, path: string[] = []): string[][] {
  if (value === null || typeof value !== 'object') return [];
  return Object.keys(value).flatMap((key) => [
    ...(key === '__proto__' ? [[...path, key]] : []),
    ...protoKeyPaths((value as Record<string, unknown>)[key], [...path, key]),
  ]);
}

function describeIssue(name: string, issue: z.core.$ZodIssue): string {
  // A bad node ID or channel name (a record's key): what is wrong with the name, not "Invalid key in record".
  if (issue.code === 'invalid_key')
    return describeAt(name, issue.path.map(String), issue.issues.map((i) => i.message).join('; '), {
      key: true,
    });
  return describeAt(name, issue.path.map(String), issue.message);
}

/**
 * `runbook payments-failover: node "restart": field "args.service": ...`; `key`: the problem is the last key of the
 * path itself (a node ID, a channel name), so a node's or channel's own name is not called a field.
 */
function describeAt(name: string, path: string[], message: string, { key = false } = {}): string {
  if (path[0] === 'nodes' && path.length >= 2) {
    const field = path.slice(2).join('.');
    return `runbook ${name}: node "${path[1]}": ${field ? `field "${field}": ` : ''}${message}`;
  }
  if (path[0] === 'state' && path.length === 2 && key)
    return `runbook ${name}: state channel "${path[1]}": ${message}`;
  if (path[0] === 'state' && path.length >= 2)
    return `runbook ${name}: state channel "${path[1]}": field "${path.slice(2).join('.') || 'type'}": ${message}`;
  return `runbook ${name}: field "${path.join('.') || '(root)'}": ${message}`;
}

/** The node's outgoing edges, by field name (`branches.0` for a parallel node's first branch). */
export function edgesOf(node: RunbookNode): [field: string, target: string][] {
  const edges: [string, string | undefined][] = [];
  switch (node.kind) {
    case 'branch':
      edges.push(['then', node.then], ['else', node.else]);
      break;
    case 'parallel':
      node.branches.forEach((b, i) => edges.push([`branches.${i}`, b]));
      edges.push(['next', node.next]);
      break;
    default:
      edges.push(['next', node.next], ['denied', node.denied]);
  }
  return edges.filter((e): e is [string, string] => e[1] !== undefined);
}

/** Entry exists, edges point at nodes, every node is reachable, no cycles, templates and writes name channels. */
function graphIssues(definition: RunbookDefinition): string[] {
  const { name, nodes, entry, state } = definition;
  const at = (id: string, field: string, message: string) =>
    `runbook ${name}: node "${id}": field "${field}": ${message}`;
  const issues: string[] = [];
  if (!own(nodes, entry)) issues.push(`runbook ${name}: field "entry": no node "${entry}"`);
  for (const [id, node] of Object.entries(nodes)) {
    for (const [field, target] of edgesOf(node))
      if (!own(nodes, target)) issues.push(at(id, field, `no node "${target}"`));
    for (const [field, value] of templatedFields(node))
      for (const root of templateRoots(value, field)) {
        if ('error' in root) issues.push(at(id, root.field, root.error));
        else if (!own(state, root.channel))
          issues.push(
            at(id, root.field, `template names state channel "${root.channel}", which is not declared`),
          );
      }
    const channel = writtenChannel(node);
    if (channel && !own(state, channel))
      issues.push(at(id, 'write', `state channel "${channel}" is not declared`));
  }
  if (issues.length > 0) return issues; // the walks below need every edge to resolve

  const reachable = reach(nodes, entry);
  for (const id of Object.keys(nodes))
    if (!reachable.has(id)) issues.push(`runbook ${name}: node "${id}": unreachable from entry "${entry}"`);
  const cycle = findCycle(nodes, entry);
  if (cycle)
    issues.push(at(cycle.at(-2)!, 'next', `makes a cycle (${cycle.join(' → ')}); runbooks are acyclic`));
  for (const [id, node] of Object.entries(nodes)) {
    if (node.kind !== 'parallel' || !node.next) continue;
    node.branches.forEach((branch, i) => {
      if (reach(nodes, branch).has(node.next!))
        issues.push(
          at(
            id,
            `branches.${i}`,
            `branch "${branch}" reaches the join "${node.next}"; end the branch (no next) instead`,
          ),
        );
    });
  }
  return issues;
}

function templatedFields(node: RunbookNode): [string, unknown][] {
  switch (node.kind) {
    case 'tool':
      return [['args', node.args]];
    case 'runbook':
      return [['input', node.input]];
    case 'agent':
      return [['prompt', node.prompt]];
    case 'gate':
      return [['message', node.message]];
    default:
      return [];
  }
}

export function writtenChannel(node: RunbookNode): string | undefined {
  if (node.kind === 'agent') return node.write;
  if (node.kind !== 'tool' || !node.write) return undefined;
  return typeof node.write === 'string' ? node.write : node.write.channel;
}

function reach(nodes: RunbookDefinition['nodes'], from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const id = stack.pop()!;
    const node = own(nodes, id);
    if (seen.has(id) || !node) continue;
    seen.add(id);
    for (const [, target] of edgesOf(node)) stack.push(target);
  }
  return seen;
}

/** A path that comes back to a node it passed (depth-first from the entry), or undefined. */
function findCycle(nodes: RunbookDefinition['nodes'], entry: string): string[] | undefined {
  const done = new Set<string>();
  const visit = (id: string, path: string[]): string[] | undefined => {
    if (path.includes(id)) return [...path.slice(path.indexOf(id)), id];
    const node = own(nodes, id);
    if (done.has(id) || !node) return undefined;
    for (const [, target] of edgesOf(node)) {
      const cycle = visit(target, [...path, id]);
      if (cycle) return cycle;
    }
    done.add(id);
    return undefined;
  };
  return visit(entry, []);
}
