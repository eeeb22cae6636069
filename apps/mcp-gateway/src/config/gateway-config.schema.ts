// GATEWAY_CONFIG: the downstream MCP servers (the agents config's own `mcpServers` schema), who may call which tool
// (roles and users, as an agent's), which tools wait for a decision beyond their tier, and how long a call waits.
import { z } from 'zod';
import { ConfirmationConfigSchema, RolesConfigSchema, UsersConfigSchema } from '@countersign/contracts';
import { McpServerConfigSchema, ServerNameSchema } from '@countersign/tool-providers';

/** MCP clients commonly give up on a request after 60 s; a held call must answer before that. */
export const MAX_HOLD_MS = 55_000;

export const GatewayConfigSchema = z
  .object({
    /** The servers whose tools the gateway serves, each as `<server>__<tool>` unless its `prefix` says otherwise. */
    mcpServers: z
      .record(ServerNameSchema, McpServerConfigSchema)
      .refine((servers) => Object.keys(servers).length > 0, 'must name at least one server'),
    /** `{ "<role>": { "allow": ["tool:<name>" or "tool:*"], "deny": [...] } }`: an explicit deny wins. */
    roles: RolesConfigSchema,
    /** Principal ID → role names. A principal not listed sees and calls nothing. */
    users: UsersConfigSchema,
    /** Tools (gateway names) that wait for a decision although their tier is `auto`. */
    confirmation: ConfirmationConfigSchema,
    /** A confirm-tier call of a client without MCP tasks is held this long, then answered "waiting for approval". */
    hold: z
      .object({
        /** @defaultValue 45000 (0: answer at once) */
        maxMs: z
          .number()
          .int()
          .min(0)
          .max(
            MAX_HOLD_MS,
            `must stay below the 60 s request timeout of common MCP clients (at most ${MAX_HOLD_MS})`,
          )
          .default(45_000),
        /** A progress notification this often while held (to clients that sent a progress token). */
        progressEveryMs: z.number().int().min(250).max(30_000).default(5_000),
      })
      .strict()
      .default({ maxMs: 45_000, progressEveryMs: 5_000 }),
    /** How long a confirm-tier call's outcome (its result, or the refusal) answers identical calls; then they ask anew. */
    resultTtlMs: z
      .number()
      .int()
      .min(60_000)
      .max(30 * 86_400_000)
      .default(86_400_000),
    tasks: z
      .object({
        /** Offer MCP tasks for confirm-tier tools (`execution.taskSupport: "optional"`). */
        enabled: z.boolean().default(true),
        /** A task's life when the client asks for none; a longer request is cut to `maxTtlMs`. */
        defaultTtlMs: z
          .number()
          .int()
          .min(1_000)
          .max(7 * 86_400_000)
          .default(3_600_000),
        maxTtlMs: z
          .number()
          .int()
          .min(1_000)
          .max(7 * 86_400_000)
          .default(86_400_000),
        /** Unfinished tasks one session may have at once. */
        maxPerSession: z.number().int().min(1).max(10_000).default(100),
      })
      .strict()
      .default({ enabled: true, defaultTtlMs: 3_600_000, maxTtlMs: 86_400_000, maxPerSession: 100 }),
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const [user, roles] of Object.entries(config.users)) {
      roles.forEach((role, i) => {
        if (!config.roles[role])
          ctx.addIssue({
            code: 'custom',
            path: ['users', user, i],
            message: `role "${role}" is not defined in roles`,
          });
      });
    }
  });
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;
