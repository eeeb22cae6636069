// How tool providers are declared in config: MCP servers (stdio or streamable HTTP) and plain HTTP tools. Secrets are
// references ({"$secret": "NAME"}), tiers are Countersign's own patterns, limits have defaults.
import { z } from 'zod';
import { TierSchema, ToolNameSchema } from '@countersign/contracts';
import { McpPreviewSchema, McpReadCallSchema, PreviewTemplateSchema } from './preview-template';
import { ConfigValueSchema, PlainValueSchema } from './secrets';

const ms = (max: number) => z.number().int().min(1).max(max);

/** Server names go into tool names (`<server>__<tool>`): letters, digits and `-`, so the `__` that follows is unambiguous. */
export const ServerNameSchema = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[A-Za-z0-9-]+$/, 'may contain only letters, digits and -');

const EnvNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const HeaderNameSchema = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'must be an HTTP header name');
/** A glob over the provider's own tool names (`*` any run, `?` one character). */
const ToolPatternSchema = z.string().min(1).max(128);
const MAX_RESULT_BYTES = 1024 * 1024;
/** How much of a result a tool keeps (32 KiB unless set): more is cut. */
const resultBytes = () =>
  z
    .number()
    .int()
    .min(256)
    .max(MAX_RESULT_BYTES)
    .default(32 * 1024);

/** How long a precondition may take (2 s unless set): no answer by then means the call does not run. */
const preconditionTimeout = () =>
  ms(60_000)
    .default(2_000)
    .describe('The longest its check may take; no answer by then means the call does not run (fail closed).');

/** A precondition of an MCP server's tool: a read-only call of one of the server's `auto` tools, its answer the value. */
export const McpPreconditionSchema = z
  .object({
    call: McpReadCallSchema.describe(
      "The read call: `tool` (one of the server's own tools, tier `auto`) and `args` (templates over the call's).",
    ),
    timeoutMs: preconditionTimeout(),
  })
  .strict();

export type McpPrecondition = z.infer<typeof McpPreconditionSchema>;

/** A precondition of an HTTP tool: a GET request whose JSON answer is the value. */
export const HttpPreconditionSchema = z
  .object({
    url: PlainValueSchema.describe(
      'The GET request, with `{name}` placeholders filled from the arguments (only those: the other arguments are ' +
        "not sent); the tool's headers go with it. Its answer (JSON) is the value.",
    ),
    timeoutMs: preconditionTimeout(),
  })
  .strict();

const McpServerCommon = {
  description: z.string().max(500).optional().describe('A note for people reading the config.'),
  // Another prefix keeps a moved tool's name (and the RBAC, routing rules and runbooks that name it).
  prefix: z
    .string()
    .max(40)
    .regex(/^[A-Za-z0-9_-]*$/, 'may contain only letters, digits, _ and -')
    .optional()
    .describe(
      "Put before each of the server's tool names; unset: `<name>__`. A name two providers of one agent both offer " +
        'is offered by neither.',
    ),
  tiers: z
    .record(ToolPatternSchema, TierSchema)
    .default({})
    .describe(
      'Tool-name glob (`*`, `?`) → `auto`, `confirm` or `manual_only`; a tool no pattern names is `confirm`. The ' +
        "server's annotations may only raise a tier.",
    ),
  timeoutMs: ms(3_600_000)
    .default(30_000)
    .describe('The longest a call may take; then it is cancelled at the server and the model told so.'),
  toolTimeoutMs: z
    .record(ToolPatternSchema, ms(3_600_000))
    .default({})
    .describe("Tool-name glob (the server's own names) → its timeout, instead of `timeoutMs`."),
  previews: z
    .record(ToolPatternSchema, McpPreviewSchema)
    .default({})
    .describe(
      "Tool-name glob (the server's own names) → the preview approvers see: a template over the call's arguments, " +
        '`"restart {service}"` (`{a.b}` for a nested one, `?` when left out), or `{ "call": { "tool", "args" }, ' +
        '"text" }`: a read-only call of one of the server\'s `auto` tools first, its answer read as `{result…}`.',
    ),
  preconditions: z
    .record(ToolPatternSchema, McpPreconditionSchema)
    .default({})
    .describe(
      'Tool-name glob (the server\'s own names) → the tool\'s precondition: `{ "call": { "tool", "args" } }`, a ' +
        "read-only call of one of the server's `auto` tools whose answer (its JSON, else its text) approvers see and " +
        'the decision signs; checked again right before the approved call runs, which runs only if it is unchanged.',
    ),
  connectTimeoutMs: ms(600_000)
    .default(10_000)
    .describe('Connecting and listing the tools (at start the worker waits this long before it takes runs).'),
  maxResultBytes: resultBytes().describe(
    'Results are cut to this many bytes of text (with a note to the model).',
  ),
  restart: z
    .object({
      initialDelayMs: ms(600_000).default(500).describe('The first delay before reconnecting or restarting.'),
      maxDelayMs: ms(3_600_000).default(30_000).describe('The longest delay (it doubles up to this).'),
    })
    .strict()
    .default({ initialDelayMs: 500, maxDelayMs: 30_000 })
    .describe('Reconnecting (HTTP) or restarting (stdio) after a failure.'),
};

export const StdioServerConfigSchema = z
  .object({
    transport: z
      .literal('stdio')
      .describe('`stdio`: a process the service starts; `http`: a streamable HTTP endpoint.'),
    command: z.string().min(1).describe('The program to start.'),
    args: z.array(z.string()).default([]).describe('Its arguments.'),
    env: z
      .record(EnvNameSchema, ConfigValueSchema)
      .default({})
      .describe(
        "The server's whole environment besides `PATH`, `HOME` and the like (the service's own is not passed on); " +
          'values may be `$secret` references.',
      ),
    cwd: z.string().min(1).optional().describe('Its working directory.'),
    ...McpServerCommon,
  })
  .strict();

export const HttpServerConfigSchema = z
  .object({
    transport: z.literal('http'),
    url: PlainValueSchema.describe(
      'The streamable HTTP endpoint, e.g. `http://ops-mcp:3002/mcp` (or `$env`).',
    ),
    headers: z
      .record(HeaderNameSchema, ConfigValueSchema)
      .default({})
      .describe('Sent with every request (`$secret` references read for each one).'),
    ...McpServerCommon,
  })
  .strict();

export const McpServerConfigSchema = z.discriminatedUnion('transport', [
  StdioServerConfigSchema,
  HttpServerConfigSchema,
]);
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** A JSON schema of an object, as an HTTP tool's arguments (checked with ajv when the tool is built). */
const ObjectSchemaSchema = z
  .record(z.string(), z.unknown())
  .refine((schema) => schema.type === 'object', { message: 'must be a JSON schema with "type": "object"' });

export const HttpToolConfigSchema = z
  .object({
    description: z.string().min(1).max(2_000).describe('What the model and the approvers read.'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).describe('The HTTP method.'),
    url: PlainValueSchema.describe(
      'With `{name}` placeholders filled from the arguments (URL-encoded; each must be a required argument), or ' +
        '`$env`. The other arguments go in the query string (GET, DELETE) or the JSON body (POST, PUT, PATCH).',
    ),
    args: ObjectSchemaSchema.default({
      type: 'object',
      properties: {},
      additionalProperties: false,
    }).describe('The arguments\' JSON schema (`"type": "object"`), checked with ajv when the tool is built.'),
    headers: z
      .record(HeaderNameSchema, ConfigValueSchema)
      .default({})
      .describe('Sent with every request (`$secret` references allowed).'),
    // A request to an internal API may change something unless the config says it does not.
    tier: TierSchema.default('confirm').describe('Its tier.'),
    preview: PreviewTemplateSchema.optional().describe(
      'The preview approvers see, a template over the call\'s arguments: `"refund {amount} {currency} to ' +
        '{customer}"` (`{a.b}` for a nested one, `?` when left out).',
    ),
    precondition: HttpPreconditionSchema.optional().describe(
      'A read-only GET whose JSON answer (e.g. `{"replicas": 6}`) approvers see and the decision signs; checked ' +
        'again right before the approved call runs, which runs only if the answer is unchanged.',
    ),
    timeoutMs: ms(600_000).default(10_000).describe('The longest a call may take.'),
    maxResultBytes: resultBytes().describe('The response body is cut to this many bytes.'),
  })
  .strict();
export type HttpToolConfig = z.infer<typeof HttpToolConfigSchema>;

/** What a service's config declares: `mcpServers` by server name, `httpTools` by tool name. */
export const ToolProvidersConfigSchema = z
  .object({
    mcpServers: z
      .record(ServerNameSchema, McpServerConfigSchema)
      .default({})
      .describe('MCP servers whose tools agents may use, by server name (below).'),
    httpTools: z
      .record(ToolNameSchema, HttpToolConfigSchema)
      .default({})
      .describe('HTTP APIs as tools, one per request, by tool name (below).'),
  })
  .strict();
export type ToolProvidersConfig = z.infer<typeof ToolProvidersConfigSchema>;
