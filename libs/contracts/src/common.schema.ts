import { z } from 'zod';

/** IDs travel in Redis keys and BullMQ job IDs, so they are short, printable and never contain ':'. */
export const IdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.@-]+$/, 'may contain only letters, digits and _ . @ -');

export const ToolNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-zA-Z0-9_-]+$/, 'may contain only letters, digits, _ and -');

export const TierSchema = z.enum(['auto', 'confirm', 'manual_only']);
export type Tier = z.infer<typeof TierSchema>;

/** RBAC as the agents config and the gateway config write it: role → allowed and denied `tool:<name>` (or `tool:*`). */
const PermissionSchema = z.string().regex(/^tool:([a-zA-Z0-9_-]+|\*)$/, 'must be tool:<name> or tool:*');
export const RolesConfigSchema = z.record(
  IdSchema,
  z
    .object({
      allow: z
        .array(PermissionSchema)
        .default([])
        .describe('What the role may call: `tool:<name>` or `tool:*`.'),
      deny: z
        .array(PermissionSchema)
        .default([])
        .describe('What it may not call, whatever another role allows.'),
    })
    .strict(),
);

/** Principal (user) ID → role names. One not listed may call nothing. */
export const UsersConfigSchema = z.record(IdSchema, z.array(IdSchema).min(1));

/**
 * The check of a config with `roles` and `users` (an agent's, the gateway's): every role a user has is one of its
 * `roles`. An own key, so names every object has (`toString`, `constructor`) are no roles. Use it as `.superRefine`.
 */
export function usersHaveDefinedRoles(
  config: { roles: Record<string, unknown>; users: Record<string, string[]> },
  ctx: z.RefinementCtx,
): void {
  for (const [user, roles] of Object.entries(config.users)) {
    roles.forEach((role, i) => {
      if (!Object.hasOwn(config.roles, role))
        ctx.addIssue({
          code: 'custom',
          path: ['users', user, i],
          message: `role "${role}" is not defined in roles`,
        });
    });
  }
}

/** Tools that wait for a decision although their tier is `auto`, beyond what the tiers ask. */
export const ConfirmationConfigSchema = z
  .object({
    require: z.array(ToolNameSchema).default([]).describe('These tools wait for a decision.'),
    requireForAll: z.boolean().default(false).describe('Every tool waits for a decision.'),
  })
  .strict()
  .default({ require: [], requireForAll: false });

/**
 * The largest tool-call arguments accepted anywhere, as JSON: a parked call's arguments wait in Redis (in the
 * run and in its approval request) for as long as its approvers take, and are shown to them in full.
 */
export const MAX_TOOL_ARGS_BYTES = 64 * 1024;

/** UTF-8 size of a value's JSON form; Infinity when it has none (a cycle, a BigInt). */
function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    return Infinity;
  }
}

/** Tool arguments: a JSON object of at most MAX_TOOL_ARGS_BYTES. */
export const ToolArgsSchema = z
  .record(z.string(), z.unknown())
  .refine((args) => jsonBytes(args) <= MAX_TOOL_ARGS_BYTES, {
    message: `must be at most ${MAX_TOOL_ARGS_BYTES} bytes as JSON`,
  });
export type ToolArgs = z.infer<typeof ToolArgsSchema>;

/** Lowercase hex SHA-256. */
export const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256');

export const IsoDateSchema = z.iso.datetime();
