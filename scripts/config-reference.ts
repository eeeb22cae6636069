// Writes docs/reference/configuration.md from the zod schemas every service validates its configuration with: one
// source for each variable and config key, its default and its meaning (`npm run docs:config`). The page is never
// edited by hand; test/config-reference.e2e-spec.ts renders it in memory and fails when the committed page differs, or
// when a variable or key has no description.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Option } from 'commander';
import * as markdownPlugin from 'prettier/plugins/markdown';
import { format } from 'prettier/standalone';
import { z } from 'zod';
import {
  BaseEnvSchema,
  DurationSchema,
  PrincipalsConfigSchema,
  RateLimitSchema,
  TrustProxySchema,
} from '@countersign/platform';
import { HttpToolConfigSchema, McpServerConfigSchema } from '@countersign/tool-providers';
import { AgentsConfigSchema } from '../apps/agent-worker/src/config/agents-config.schema';
import { AgentWorkerEnvSchema } from '../apps/agent-worker/src/config/worker-config';
import { ApprovalServiceEnvSchema } from '../apps/approval-service/src/config/approval-service.config';
import { ApprovalsConfigSchema } from '../apps/approval-service/src/config/approvals-config.schema';
import {
  approvalUrlOption,
  approverTokenOption,
  tokenOption,
  workerUrlOption,
} from '../apps/cli/src/options';
import { GatewayConfigSchema } from '../apps/mcp-gateway/src/config/gateway-config.schema';
import { GatewayEnvSchema } from '../apps/mcp-gateway/src/config/gateway-env';
import { OpsServerEnvSchema } from '../apps/ops-mcp-server/src/config/ops-server-config';

const ROOT = join(__dirname, '..');
export const REFERENCE_PATH = 'docs/reference/configuration.md';

type Schema = z.core.$ZodType;
type ObjectSchema = z.ZodObject<z.ZodRawShape>;

/** How the shared value formats are written, told by the schema they are built on (a refine or default keeps it). */
const valueForms = z.registry<{ values: string }>();
valueForms.add(DurationSchema, { values: 'a duration: `250ms`, `90s`, `30m`, `2h`, `1d`' });
valueForms.add(RateLimitSchema, { values: '`<requests>/<window>` (`30/1m`) or `off`' });
valueForms.add(TrustProxySchema, { values: 'a hop count, or addresses/subnets (`loopback,10.0.0.0/8`)' });

/** The placeholder a record's keys get in a key path, by the record's own key. */
const RECORD_KEYS: Record<string, string> = {
  agents: '<name>',
  mcpServers: '<name>',
  httpTools: '<name>',
  roles: '<role>',
};

// ---------------------------------------------------------------------------------------------------------------
// Reading the schemas

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly']);

function def(schema: Schema): z.core.$ZodTypeDef & Record<string, unknown> {
  return schema._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
}

/** The schema under optional/default/prefault/nullable/readonly: what the value is. */
function core(schema: Schema): Schema {
  let current = schema;
  while (WRAPPERS.has(def(current).type)) current = def(current).innerType as Schema;
  return current;
}

/** The description given anywhere between a key and its value's schema (`.describe()` or `.meta()`). */
export function descriptionOf(schema: Schema): string | undefined {
  for (let current = schema; ; current = def(current).innerType as Schema) {
    const description = z.globalRegistry.get(current)?.description;
    if (description) return description;
    if (!WRAPPERS.has(def(current).type)) return undefined;
  }
}

/**
 * The default as the schema holds it: `raw` when it is what a user writes (a prefault, or a default on the input
 * side of a transform), else the parsed value.
 */
function declaredDefault(schema: Schema): { value: unknown; raw: boolean } | undefined {
  let raw = false;
  for (let current = schema; ;) {
    const d = def(current);
    if (d.type === 'prefault') return { value: d.defaultValue, raw: true };
    if (d.type === 'default') return { value: d.defaultValue, raw };
    if (WRAPPERS.has(d.type)) current = d.innerType as Schema;
    else if (d.type === 'pipe') {
      current = d.in as Schema;
      raw = true;
    } else return undefined;
  }
}

type Presence = { kind: 'required' } | { kind: 'unset' } | { kind: 'default'; shown: string };

/**
 * Whether a key must be set, may be left unset, or has a default, and that default written as a user writes it. The
 * written form is checked: parsing it must give what leaving the key out gives, so the page cannot show a default
 * the service does not use.
 */
function presenceOf(schema: Schema, path: string, where: 'environment' | 'file'): Presence {
  const absent = z.safeParse(schema, undefined);
  if (!absent.success) return { kind: 'required' };
  if (absent.data === undefined) return { kind: 'unset' };
  const declared = declaredDefault(schema);
  const written = declared === undefined ? undefined : writtenForm(declared, where);
  if (written !== undefined) {
    const parsed = z.safeParse(schema, where === 'environment' ? written : JSON.parse(written));
    if (parsed.success && isDeepStrictEqual(parsed.data, absent.data)) {
      return written === '' ? { kind: 'unset' } : { kind: 'default', shown: written };
    }
  }
  throw new Error(
    `${path}: its default cannot be shown as written in the ${where}; declare it with .prefault(<the value as written>)`,
  );
}

function writtenForm(
  declared: { value: unknown; raw: boolean },
  where: 'environment' | 'file',
): string | undefined {
  const { value, raw } = declared;
  if (where === 'file') return JSON.stringify(value);
  if (raw || ['string', 'number', 'boolean'].includes(typeof value)) return String(value);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(',');
  return undefined;
}

/** What a value may be, read from the schema's checks (ranges, lengths, formats, choices). */
function valuesOf(schema: Schema, nested = false): string {
  const form = valueForms.get(schema as z.ZodType);
  if (form) return form.values;
  const d = def(schema);
  switch (d.type) {
    case 'optional':
    case 'default':
    case 'prefault':
    case 'nullable':
    case 'readonly':
      return valuesOf(d.innerType as Schema, nested);
    case 'pipe': {
      const input = valuesOf(d.in as Schema, nested);
      const output = d.out as Schema;
      if (input || def(output).type === 'transform') return input;
      if (def(output).type === 'array')
        return `comma-separated: ${valuesOf(def(output).element as Schema, true)}`;
      return valuesOf(output, nested);
    }
    case 'string':
      return stringValues(schema as z.ZodString, nested);
    case 'number':
      return numberValues(schema as z.ZodNumber);
    case 'boolean':
      return '`true` or `false`';
    case 'enum':
      return choices(Object.values(d.entries as Record<string, string>));
    case 'literal':
      return choices((d.values as unknown[]).map(String));
    case 'union':
      return unionValues(d.options as Schema[]);
    case 'array': {
      const element = valuesOf(d.element as Schema, true);
      return element ? `list of ${element}` : 'list';
    }
    case 'record':
      return `\`{ "<${keyName(d.keyType as Schema)}>": … }\``;
    case 'object':
      return `\`${objectSummary(schema as ObjectSchema)}\``;
    default:
      return '';
  }
}

/** `a or b`; "one or a list" (`X, or a list of them`) when the second form is a list of the first. */
function unionValues(options: Schema[]): string {
  const [one, list] = options;
  if (options.length === 2 && def(list).type === 'array') {
    const item = valuesOf(def(list).element as Schema, true);
    if (item === valuesOf(one, true)) return `${item}, or a list of them`;
  }
  return options.map((option) => valuesOf(option, true)).join(' or ');
}

function stringValues(schema: z.ZodString, nested: boolean): string {
  if (schema.format === 'url') return 'URL';
  if (schema.format === 'email') return 'email address';
  if (schema.format === 'datetime') return 'ISO 8601 date-time';
  if ((schema.minLength ?? 0) >= 2) return `≥ ${schema.minLength} characters`;
  return nested ? 'text' : '';
}

function numberValues(schema: z.ZodNumber): string {
  const kind = schema.isInt ? 'integer' : 'number';
  const min = schema.minValue ?? -Infinity;
  const max = schema.maxValue ?? Infinity;
  const bounded = (n: number) => Number.isFinite(n) && Math.abs(n) < Number.MAX_SAFE_INTEGER;
  if (bounded(min) && bounded(max)) return `${kind} ${min}–${max}`;
  if (bounded(min)) return `${kind} ≥ ${min}`;
  if (bounded(max)) return `${kind} ≤ ${max}`;
  return kind;
}

function choices(values: string[]): string {
  const quoted = values.map((value) => `\`${value}\``);
  return quoted.length <= 1 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

function keyName(schema: Schema): string {
  return descriptionOf(schema) ?? 'name';
}

/** `{ provider: "openai", model?, baseUrl? }`: an object's keys, its literal values, `?` on those it may leave out. */
function objectSummary(schema: ObjectSchema): string {
  const keys = Object.entries(schema.shape).map(([key, value]) => {
    const inner = core(value);
    if (def(inner).type === 'literal')
      return `${key}: ${JSON.stringify((def(inner).values as unknown[])[0])}`;
    return z.safeParse(value, undefined).success ? `${key}?` : key;
  });
  return `{ ${keys.join(', ')} }`;
}

// ---------------------------------------------------------------------------------------------------------------
// Tables

interface Row {
  key: string;
  schema: Schema;
  /** Set when only some forms of a union have the key: the values of the discriminator that do. */
  onlyWith?: string[];
}

/** Every variable of an environment schema, minus those of `except` (shown in another section). */
export function envRows(schema: ObjectSchema, except?: ObjectSchema): Row[] {
  return Object.entries(schema.shape)
    .filter(([key]) => !except || !(key in except.shape))
    .map(([key, value]) => ({ key, schema: value }));
}

/**
 * The keys of a config file, by their path: objects are opened, records of objects become `<name>` segments, arrays of
 * objects `[]` segments, and a union of objects one set of keys. A key in `closed` is one row, described where it
 * is opened. A described object or list gets a row of its own before its keys.
 */
export function fileRows(schema: Schema, path = '', closed: string[] = []): Row[] {
  const inner = core(schema);
  const d = def(inner);
  const own: Row[] = path && descriptionOf(schema) ? [{ key: path, schema }] : [];
  if (path && closed.includes(path)) return [{ key: path, schema }];
  const join = (key: string) => (path ? `${path}.${key}` : key);
  if (d.type === 'object') {
    return [
      ...own,
      ...Object.entries((inner as ObjectSchema).shape)
        .filter(([, value]) => def(core(value)).type !== 'undefined') // keys refused by name
        .flatMap(([key, value]) => fileRows(value, join(key), closed)),
    ];
  }
  if (d.type === 'record' && def(core(d.valueType as Schema)).type === 'object') {
    const name = RECORD_KEYS[path.split('.').at(-1) ?? ''] ?? '<name>';
    return [...own, ...fileRows(d.valueType as Schema, `${path}.${name}`, closed)];
  }
  if (d.type === 'array' && def(core(d.element as Schema)).type === 'object') {
    return [...own, ...fileRows(d.element as Schema, `${path}[]`, closed)];
  }
  if (d.type === 'union' && typeof d.discriminator === 'string') return unionRows(inner, path, closed);
  return [{ key: path, schema }];
}

/** A discriminated union of objects as one set of keys; a key not every form has says which forms have it. */
function unionRows(union: Schema, path: string, closed: string[]): Row[] {
  const discriminator = def(union).discriminator as string;
  const forms = (def(union).options as ObjectSchema[]).map((option) => ({
    name: String((def(core(option.shape[discriminator])).values as unknown[])[0]),
    rows: fileRows(option, path, closed),
  }));
  const byKey = new Map<string, Row & { forms: string[] }>();
  for (const form of forms) {
    for (const row of form.rows) {
      const seen = byKey.get(row.key);
      if (seen) seen.forms.push(form.name);
      else byKey.set(row.key, { ...row, forms: [form.name] });
    }
  }
  const discriminatorKey = path ? `${path}.${discriminator}` : discriminator;
  return [...byKey.values()].map(({ forms: having, ...row }) => ({
    ...row,
    ...(row.key === discriminatorKey
      ? {
          schema: z
            .enum(forms.map((form) => form.name) as [string, ...string[]])
            .describe(descriptionOf(row.schema) ?? ''),
        }
      : {}),
    ...(having.length < forms.length ? { onlyWith: having } : {}),
  }));
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A default in milliseconds of a minute or more, as people read it: `86400000` (24 h). */
function readableMs(key: string, shown: string): string {
  const ms = Number(shown);
  if (!/(Ms|_MS)$/.test(key) || !Number.isInteger(ms) || ms < 60_000) return '';
  const [unit, size] =
    ms % 3_600_000 === 0 ? ['h', 3_600_000] : ms % 60_000 === 0 ? ['min', 60_000] : ['s', 1_000];
  return ` (${ms / size} ${unit})`;
}

function shownPresence(presence: Presence, key: string): string {
  if (presence.kind === 'required') return '**required**';
  if (presence.kind === 'unset') return '—';
  return `\`${presence.shown}\`${readableMs(key, presence.shown)}`;
}

/** "The model; …" after "`openai` only: " reads "`openai` only: the model; …" (an acronym keeps its capitals). */
const lowerFirst = (text: string) =>
  /^[A-Z][a-z]/.test(text) ? text[0].toLowerCase() + text.slice(1) : text;

function table(rows: Row[], where: 'environment' | 'file', header: string): string {
  const lines = [`| ${header} | default | values | meaning |`, '| --- | --- | --- | --- |'];
  for (const row of rows) {
    const presence = presenceOf(row.schema, row.key, where);
    const description = descriptionOf(row.schema) ?? '';
    const meaning = row.onlyWith ? `${choices(row.onlyWith)} only: ${lowerFirst(description)}` : description;
    lines.push(
      `| \`${row.key}\` | ${cell(shownPresence(presence, row.key))} | ${cell(valuesOf(row.schema))} | ${cell(meaning)} |`,
    );
  }
  return lines.join('\n');
}

export const envTable = (schema: ObjectSchema, except?: ObjectSchema) =>
  table(envRows(schema, except), 'environment', 'variable');
export const fileTable = (schema: Schema, closed: string[] = []) =>
  table(fileRows(schema, '', closed), 'file', 'key');

/** The CLI's settings, from its commander options (each a flag and an environment variable). */
function cliTable(options: Option[]): string {
  const lines = ['| variable | flag | default | meaning |', '| --- | --- | --- | --- |'];
  for (const option of options) {
    const flag = option.long ?? option.flags;
    const shown = option.defaultValue === undefined ? '—' : `\`${String(option.defaultValue)}\``;
    lines.push(`| \`${option.envVar}\` | \`${flag}\` | ${shown} | ${cell(option.description)} |`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// The page

/** Every row of the page, for the check that each has a description. */
export function allRows(): { section: string; key: string; described: boolean }[] {
  const sections: [string, Row[]][] = [
    ['shared environment', envRows(BaseEnvSchema)],
    ['PRINCIPALS_CONFIG', fileRows(PrincipalsConfigSchema)],
    ['agent worker environment', envRows(AgentWorkerEnvSchema, BaseEnvSchema)],
    ['AGENTS_CONFIG', fileRows(AgentsConfigSchema, '', AGENTS_CLOSED)],
    ['mcpServers', fileRows(McpServerConfigSchema)],
    ['httpTools', fileRows(HttpToolConfigSchema)],
    ['approval service environment', envRows(ApprovalServiceEnvSchema, BaseEnvSchema)],
    ['APPROVALS_CONFIG', fileRows(ApprovalsConfigSchema)],
    ['ops MCP server environment', envRows(OpsServerEnvSchema)],
    ['MCP gateway environment', envRows(GatewayEnvSchema)],
    ['GATEWAY_CONFIG', fileRows(GatewayConfigSchema, '', ['mcpServers'])],
  ];
  return sections.flatMap(([section, rows]) =>
    rows.map((row) => ({ section, key: row.key, described: Boolean(descriptionOf(row.schema)?.trim()) })),
  );
}

const AGENTS_CLOSED = ['mcpServers', 'httpTools'];

/** The page as Markdown, before Prettier lays out its tables. */
export function renderConfigReference(): string {
  return [
    '# Configuration reference',
    '<!-- Generated by scripts/config-reference.ts (npm run docs:config) from the zod schemas of each service: edit ' +
      'the descriptions there, not this page. test/config-reference.e2e-spec.ts fails when they disagree. -->',
    'Every service reads only its environment (validated with zod at start-up) and its JSON config files. A bad value ' +
      'stops start-up with a message naming the variable or the config path. An empty variable (`FOO=`) counts as ' +
      'unset. One section per service; each JSON file is described under the service that reads it. How to set them ' +
      'for a deployment: [Deploy and scale](../guides/deploy.md).',
    'In the tables, **default** is what applies when the variable or key is left out (—: unset, **required**: the ' +
      'service refuses to start without it), and **values** what the schema accepts.',
    '## Shared: agent worker and approval service',
    'Both services read these; the ops MCP server and the MCP gateway read some of them (listed in their sections). ' +
      'Every `RATE_LIMIT_*` variable of a service: [rate limits](rate-limits.md).',
    envTable(BaseEnvSchema),
    '### The principal directory (`PRINCIPALS_CONFIG`)',
    '`config/principals.json` (`PRINCIPALS_CONFIG`): who may call any service. Every service reads the same file, so ' +
      'a person who requests runs and approves others\u2019 calls (bob) is one identity everywhere.',
    fileTable(PrincipalsConfigSchema),
    'The demo\u2019s principals (alice, bob, carol, dave, mallory, and the machine clients `runbook-bot`, which may ' +
      'start runs for alice, `agent-worker`, the workers\u2019 own principal towards the ops MCP server, `prometheus`, ' +
      'a metrics reader, `agent-runner`, an approvals client, and `mcp-gateway`, the MCP gateway\u2019s own principal) have the readable tokens `<id>-demo-token-change-me`: replace them. ' +
      'carol is the demo\u2019s rule-writer.',
    '## Agent worker',
    envTable(AgentWorkerEnvSchema, BaseEnvSchema),
    '### The agents config (`AGENTS_CONFIG`)',
    '`config/agents.json`: the agents, and the tool providers their tools may come from ' +
      '([Put your own tool behind approval](../guides/tools.md)).',
    fileTable(AgentsConfigSchema, AGENTS_CLOSED),
    'Built-in agents: `ops` (scripted model) and `ops-llm` (OpenAI-compatible model). `users` are principal IDs of ' +
      '`PRINCIPALS_CONFIG`: a run\u2019s user is the principal that started it (or the user a machine client acts ' +
      'for), never a field of the request. `alice` and `bob` are operators (all tools), `mallory` is a viewer (status ' +
      'and list only). Tools of the `ops` agent, from the repository\u2019s ops MCP server (`mcpServers.ops`, its ' +
      'tiers set there): `get_service_status`, `list_services` (auto), `restart_service`, `scale_service` (confirm), ' +
      '`delete_volume` (manual_only).',
    '### MCP servers (`mcpServers.<name>`)',
    'Used by the agents config and the MCP gateway\u2019s config alike; how servers, names, tiers, secrets and ' +
      'restarts behave: [Put your own tool behind approval](../guides/tools.md#an-mcp-server). A value marked ' +
      '`$secret` may be `{ "$secret": "NAME" }` (read from the environment, or the file `NAME_FILE`); `$env`, ' +
      '`{ "$env": "NAME", "default"?: "…" }`.',
    fileTable(McpServerConfigSchema),
    '### HTTP tools (`httpTools.<name>`)',
    'One tool per request; how URLs, arguments, results and redirects behave: ' +
      '[Put your own tool behind approval](../guides/tools.md#an-http-api).',
    fileTable(HttpToolConfigSchema),
    '## Approval service',
    envTable(ApprovalServiceEnvSchema, BaseEnvSchema),
    '### The approvals config (`APPROVALS_CONFIG`)',
    'Routing rules, groups and defaults; how a request is routed: [The policy model](policy.md#routing).',
    fileTable(ApprovalsConfigSchema),
    '## Ops MCP server',
    '`apps/ops-mcp-server`, the demo\u2019s ops tools over MCP ' +
      '([Put your own tool behind approval](../guides/tools.md#the-repositorys-ops-mcp-server)).',
    envTable(OpsServerEnvSchema),
    '## MCP gateway',
    '`apps/mcp-gateway` ([The MCP gateway](../guides/mcp-gateway.md)). The config\u2019s `$secret` and `$env` ' +
      'references are read from the gateway\u2019s environment (`config/gateway.json` sends `GATEWAY_TOKEN` to the ' +
      'ops MCP server, whose `OPS_MCP_CALLERS` must then name `mcp-gateway`, as compose\u2019s does).',
    envTable(GatewayEnvSchema),
    '### The gateway config (`GATEWAY_CONFIG`)',
    fileTable(GatewayConfigSchema, ['mcpServers']),
    '## The CLI',
    'Each setting is a flag or its environment variable ([the CLI](cli.md)).',
    cliTable([tokenOption(), approverTokenOption(), workerUrlOption(), approvalUrlOption()]),
  ].join('\n\n');
}

/** The page as committed: rendered, then laid out by Prettier with the repository's settings. */
export async function formattedConfigReference(): Promise<string> {
  const settings = JSON.parse(readFileSync(join(ROOT, '.prettierrc'), 'utf8')) as Record<string, unknown>;
  return format(`${renderConfigReference()}\n`, {
    ...settings,
    parser: 'markdown',
    plugins: [markdownPlugin],
  });
}

async function main(): Promise<void> {
  const missing = allRows().filter((row) => !row.described);
  if (missing.length > 0) {
    process.stderr.write(
      `no description (add .describe() to the schema):\n${missing.map((r) => `  ${r.section}: ${r.key}`).join('\n')}\n`,
    );
    process.exitCode = 1;
    return;
  }
  writeFileSync(join(ROOT, REFERENCE_PATH), await formattedConfigReference());
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
