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
  usersHaveDefinedRoles,
} from '@countersign/contracts';
import { AdmissionConfigSchema, ConfirmationHandlerConfigSchema } from '@countersign/admission';
import { PolicyConfigSchema } from '@countersign/policy';
import { opsToolSettings } from '@countersign/demo-infra';
import { ConfigError } from '@countersign/platform';
import { ServerNameSchema, ToolProvidersConfigSchema } from '@countersign/tool-providers';

const ModelSchema = z.discriminatedUnion('provider', [
  z
    .object({
      provider: z
        .literal('scripted')
        .describe(
          "`scripted`: a deterministic model that plays the run's script (the demo, tests); `openai`: an " +
            'OpenAI-compatible chat-completions API.',
        ),
    })
    .strict(),
  z
    .object({
      provider: z.literal('openai'),
      // The API key always comes from OPENAI_API_KEY.
      model: z.string().min(1).optional().describe('The model; unset: `OPENAI_MODEL`.'),
      baseUrl: z.url().optional().describe("The API's base URL; unset: `OPENAI_BASE_URL`."),
      temperature: z.number().min(0).max(2).optional().describe('The sampling temperature.'),
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

/** How long a person's denial of a call stands for the same call (same tool, same fingerprint). */
export const StickyDenialSchema = z.union([
  z
    .enum(['off', 'run'])
    .describe(
      '`run` (the default): the same call again in the same run is refused at once with the original reason and ' +
        'approver, and nobody is asked; `off`: it is asked about again.',
    ),
  z
    .object({
      scope: z.literal('requester'),
      windowSeconds: z
        .number()
        .int()
        .min(1)
        .max(30 * 24 * 3600)
        .describe('How long after the denial it stands.'),
    })
    .strict()
    .describe("The same call by the same requester, in any of that requester's runs, within the window."),
]);
export type StickyDenial = z.infer<typeof StickyDenialSchema>;

export const AgentConfigSchema = z
  .object({
    description: z.string().default('').describe('What the agent is for, for people.'),
    systemPrompt: z
      .string()
      .default('You are an operations assistant. Use the tools you are given.')
      .describe('The system prompt of its model.'),
    model: ModelSchema.default({ provider: 'scripted' }).describe('Its model.'),
    tools: z
      .array(ToolEntrySchema)
      .min(1)
      .describe(
        'Its tools: a name (built in, or an HTTP tool), `{ name, tier }` (a stricter tier than the tool declares: a ' +
          'config may raise a tier, never lower it), or `{ server, only? }` (every tool of an MCP server, or those ' +
          'whose own names match the `only` globs).',
      ),
    confirmation: ConfirmationConfigSchema.describe(
      'Tools that wait for a decision although their tier is `auto`.',
    ),
    admission: AdmissionConfigSchema.optional().describe(
      'Admission hooks: HTTP endpoints asked before a call runs (allow, skip, deny, confirm, abort; no usable answer ' +
        'refuses it) and after it ran (keep or replace the result). See the guide "Admission hooks".',
    ),
    confirmationHandler: ConfirmationHandlerConfigSchema.optional().describe(
      'Decides confirm-tier calls in a person’s place: `{ kind: "rules", name, rules }` (the first matching rule ' +
        'approves or denies; none matches: people are asked) or `{ kind: "hook", name, url, secretEnv, tools, ' +
        'timeoutMs }` (answers approve, deny or ask; a failure asks people). Never consulted for a manual-only call ' +
        'or one a before-hook sent to people. See the policy reference, "Confirmation handlers".',
    ),
    roles: RolesConfigSchema.describe('RBAC: what each role may call; an explicit deny wins.'),
    users: UsersConfigSchema.describe('Principal ID → its role names. A user not listed may run nothing.'),
    maxConcurrentTools: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(4)
      .describe('Tool calls of one turn running at once.'),
    stickyDenials: z
      .record(ToolNameSchema, StickyDenialSchema)
      .default({})
      .describe(
        'Per tool: whether a denied call, asked for again with the same arguments, is refused at once without a ' +
          'new request (`run`, the default for every tool not listed; `off`; or `{ scope: "requester", ' +
          'windowSeconds }`).',
      ),
    maxTurns: z
      .number()
      .int()
      .min(1)
      .max(200)
      .default(20)
      .describe('Model turns before the run is failed (a loop guard).'),
    infra: z
      .object({
        restartMs: opsToolSettings.restartMs(z.number()),
        maxReplicas: opsToolSettings.maxReplicas(z.number()),
      })
      .strict()
      .default({ restartMs: 0, maxReplicas: 20 })
      .describe('The simulated infrastructure of the built-in ops tools.'),
  })
  .strict()
  .superRefine(usersHaveDefinedRoles);
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

export const AgentsConfigSchema = ToolProvidersConfigSchema.extend({
  agents: z.record(IdSchema, AgentConfigSchema).describe('The agents, by name (what `POST /runs` names).'),
  policy: PolicyConfigSchema.optional().describe(
    "Every agent's rules: the JSON `roles`, `users` and tiers (unset), or a Cedar policy set in RBAC's place, and a " +
      'shadow set compared beside them (docs/reference/cedar.md).',
  ),
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
