// How tool providers are declared in config: MCP servers (stdio or streamable HTTP) and plain HTTP tools. Secrets are
// references ({"$secret": "NAME"}), tiers are Countersign's own patterns, limits have defaults.
import { z } from 'zod';
import { TierSchema, ToolNameSchema } from '@countersign/contracts';
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

const McpServerCommon = {
  description: z.string().max(500).optional(),
  /**
   * Put before each of the server's tool names. Another prefix keeps a moved tool's name (and the RBAC, routing rules
   * and runbooks that name it); a name two providers of one agent both offer is then offered by neither.
   * @defaultValue `<server>__`
   */
  prefix: z
    .string()
    .max(40)
    .regex(/^[A-Za-z0-9_-]*$/, 'may contain only letters, digits, _ and -')
    .optional(),
  /** Tool-name pattern → tier; a tool no pattern names is `confirm`. Annotations may only raise it. */
  tiers: z.record(ToolPatternSchema, TierSchema).default({}),
  /** Longest a call may take, then it is cancelled at the server and the model told so. */
  timeoutMs: ms(3_600_000).default(30_000),
  /** Per tool (the server's own name): overrides `timeoutMs`. */
  toolTimeoutMs: z.record(ToolPatternSchema, ms(3_600_000)).default({}),
  /** Connecting and listing the tools (at start the worker waits this long before it takes runs). */
  connectTimeoutMs: ms(600_000).default(10_000),
  /** Results are cut to this many bytes of text (with a note to the model). */
  maxResultBytes: z
    .number()
    .int()
    .min(256)
    .max(MAX_RESULT_BYTES)
    .default(32 * 1024),
  /** Reconnecting (HTTP) or restarting (stdio) after a failure: the delay doubles from `initialDelayMs` up to `maxDelayMs`. */
  restart: z
    .object({ initialDelayMs: ms(600_000).default(500), maxDelayMs: ms(3_600_000).default(30_000) })
    .strict()
    .default({ initialDelayMs: 500, maxDelayMs: 30_000 }),
};

export const StdioServerConfigSchema = z
  .object({
    transport: z.literal('stdio'),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    /** The server's whole environment besides PATH, HOME and the like: the worker's own is not passed on. */
    env: z.record(EnvNameSchema, ConfigValueSchema).default({}),
    cwd: z.string().min(1).optional(),
    ...McpServerCommon,
  })
  .strict();

export const HttpServerConfigSchema = z
  .object({
    transport: z.literal('http'),
    /** The streamable HTTP endpoint, e.g. `http://ops-mcp:3002/mcp`, or `{"$env": "OPS_MCP_URL", "default": ...}`. */
    url: PlainValueSchema,
    /** Sent with every request, secrets read for each one. */
    headers: z.record(HeaderNameSchema, ConfigValueSchema).default({}),
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
    description: z.string().min(1).max(2_000),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    /**
     * `{name}` placeholders are filled from the arguments (URL-encoded; each must be a required argument). The other
     * arguments go in the query string (GET, DELETE) or the JSON body (POST, PUT, PATCH).
     */
    url: PlainValueSchema,
    args: ObjectSchemaSchema.default({ type: 'object', properties: {}, additionalProperties: false }),
    headers: z.record(HeaderNameSchema, ConfigValueSchema).default({}),
    /** @defaultValue confirm: a request to an internal API may change something unless the config says it does not */
    tier: TierSchema.default('confirm'),
    timeoutMs: ms(600_000).default(10_000),
    maxResultBytes: z
      .number()
      .int()
      .min(256)
      .max(MAX_RESULT_BYTES)
      .default(32 * 1024),
  })
  .strict();
export type HttpToolConfig = z.infer<typeof HttpToolConfigSchema>;

/** What a service's config declares: `mcpServers` by server name, `httpTools` by tool name. */
export const ToolProvidersConfigSchema = z
  .object({
    mcpServers: z.record(ServerNameSchema, McpServerConfigSchema).default({}),
    httpTools: z.record(ToolNameSchema, HttpToolConfigSchema).default({}),
  })
  .strict();
export type ToolProvidersConfig = z.infer<typeof ToolProvidersConfigSchema>;
