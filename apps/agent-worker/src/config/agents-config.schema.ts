// The agents config file: which agents exist, their model, tools, tiers, confirmation policy and RBAC, and the tool
// providers (MCP servers, HTTP tools) their tools may come from.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  ConfirmationConfigSchema,
  describeZodError,
  IdSchema,
  RolesConfigSchema,
  TierSchema,
  ToolNameSchema,
  UsersConfigSchema,
} from '@countersign/contracts';
import { ConfigError } from '@countersign/platform';
import { ServerNameSchema, ToolProvidersConfigSchema } from '@countersign/tool-providers';

const ModelSchema = z.discriminatedUnion('provider', [
  z.object({ provider: z.literal('scripted') }).strict(),
  z
    .object({
      provider: z.literal('openai'),
      /** Default OPENAI_MODEL / OPENAI_BASE_URL; the API key always comes from OPENAI_API_KEY. */
      model: z.string().min(1).optional(),
      baseUrl: z.url().optional(),
      temperature: z.number().min(0).max(2).optional(),
    })
    .strict(),
]);

/**
 * A tool by name (built in, or an HTTP tool), or with a stricter tier than it declares (a config can raise a tier,
 * never lower it), or every tool of an MCP server (`only`: globs over the server's own tool names).
 */
const ToolEntrySchema = z.union([
  ToolNameSchema,
  z.object({ name: ToolNameSchema, tier: TierSchema }).strict(),
  z
    .object({ server: ServerNameSchema, only: z.array(z.string().min(1).max(128)).min(1).optional() })
    .strict(),
]);

export const AgentConfigSchema = z
  .object({
    description: z.string().default(''),
    systemPrompt: z.string().default('You are an operations assistant. Use the tools you are given.'),
    model: ModelSchema.default({ provider: 'scripted' }),
    tools: z.array(ToolEntrySchema).min(1),
    /** Tools that wait for a decision although their tier is `auto`. */
    confirmation: ConfirmationConfigSchema,
    roles: RolesConfigSchema,
    /** userId → role names. Users not listed may run nothing. */
    users: UsersConfigSchema,
    maxConcurrentTools: z.number().int().min(1).max(64).default(4),
    /** Model turns before a run is failed (a loop guard). */
    maxTurns: z.number().int().min(1).max(200).default(20),
    /** Simulated infrastructure knobs of the built-in ops tools. */
    infra: z
      .object({
        /** Milliseconds a restart takes (the service shows `restarting` meanwhile). */
        restartMs: z.number().int().min(0).max(600_000).default(0),
        /** Upper bound of `scale_service` replicas; part of the tool's definition (its JSON schema). */
        maxReplicas: z.number().int().min(1).max(1_000).default(20),
      })
      .strict()
      .default({ restartMs: 0, maxReplicas: 20 }),
  })
  .strict();
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

export const AgentsConfigSchema = ToolProvidersConfigSchema.extend({
  agents: z.record(IdSchema, AgentConfigSchema),
}).strict();
export type AgentsConfig = z.infer<typeof AgentsConfigSchema>;

/** Reads and validates the file; the error names the file and every bad field. */
export function loadAgentsConfig(path: string): AgentsConfig {
  const file = resolve(path);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`AGENTS_CONFIG: cannot read ${file}: ${(error as Error).message}`);
  }
  const parsed = AgentsConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = describeZodError(parsed.error).map((i) => `  ${i.path}: ${i.message}`);
    throw new ConfigError(`AGENTS_CONFIG: invalid ${file}:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
