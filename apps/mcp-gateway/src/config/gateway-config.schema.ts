// GATEWAY_CONFIG: the downstream MCP servers (the agents config's own `mcpServers` schema), who may call which tool
// (roles and users, as an agent's), which tools wait for a decision beyond their tier, who decides one in a person's
// place (an agent's confirmationHandler), and how long a call waits.
import { z } from 'zod';
import { AdmissionConfigSchema, ConfirmationHandlerConfigSchema } from '@countersign/admission';
import { PolicyConfigSchema } from '@countersign/policy';
import {
  ConfirmationConfigSchema,
  RolesConfigSchema,
  UsersConfigSchema,
  usersHaveDefinedRoles,
} from '@countersign/contracts';
import { McpServerConfigSchema, ServerNameSchema } from '@countersign/tool-providers';

/** MCP clients commonly give up on a request after 60 s; a held call must answer before that. */
export const MAX_HOLD_MS = 55_000;

export const GatewayConfigSchema = z
  .object({
    mcpServers: z
      .record(ServerNameSchema, McpServerConfigSchema)
      .refine((servers) => Object.keys(servers).length > 0, 'must name at least one server')
      .superRefine((servers, ctx) => {
        // Fail closed: a precondition the gateway would not check again before an approved call would bind nothing.
        for (const [name, server] of Object.entries(servers))
          if (server.preconditions && Object.keys(server.preconditions).length > 0)
            ctx.addIssue({
              code: 'custom',
              path: [name, 'preconditions'],
              message:
                'preconditions are not supported by the gateway (an approved call through it would run without the ' +
                'check): declare them in the agents config, whose worker checks them, or remove them',
            });
      })
      .describe(
        "The servers whose tools the gateway serves (at least one), as the agents config's `mcpServers`; each tool " +
          'as `<server>__<tool>` unless its `prefix` says otherwise.',
      ),
    roles: RolesConfigSchema.describe(
      "RBAC as an agent's, over gateway names: `tool:<gateway name>` or `tool:*`; an explicit deny wins.",
    ),
    users: UsersConfigSchema.describe(
      'Principal ID → its role names. A principal not listed sees and calls nothing.',
    ),
    confirmation: ConfirmationConfigSchema.describe(
      'Tools (gateway names) that wait for a decision although their tier is `auto`.',
    ),
    admission: AdmissionConfigSchema.optional().describe(
      'Admission hooks over the gateway names, as an agent\'s (see the guide "Admission hooks"); a hook\'s ' +
        '`confirm` asks people through the usual routing; one naming groups or a quorum refuses the call (the gateway cannot route to named approvers).',
    ),
    confirmationHandler: ConfirmationHandlerConfigSchema.optional().describe(
      'Decides confirm-tier calls in a person’s place, as an agent’s (gateway names in `tools`): `{ kind: "rules", ' +
        'name, rules }` or `{ kind: "hook", name, url, secretEnv, tools, timeoutMs }`; a call it approves is relayed ' +
        'with no approval request, audited as `handler:<name>`. Never consulted for a manual-only call or one a ' +
        'before-hook sent to people. See the policy reference, "Confirmation handlers".',
    ),
    policy: PolicyConfigSchema.optional().describe(
      'The JSON `roles`, `users` and tiers (unset), or a Cedar policy set in their place, and a shadow set compared ' +
        'beside them, as in the agents config (docs/reference/cedar.md). With a Cedar set every tool is listed and ' +
        'each call is asked; a call a policy sends to named groups or a quorum is refused (the approvals API routes by its own rules).',
    ),
    hold: z
      .object({
        maxMs: z
          .number()
          .int()
          .min(0)
          .max(
            MAX_HOLD_MS,
            `must stay below the 60 s request timeout of common MCP clients (at most ${MAX_HOLD_MS})`,
          )
          .default(45_000)
          .describe(
            'How long a confirm-tier call of a client without MCP tasks is held before it is answered "waiting for ' +
              'approval" (0: at once; below the 60 s after which common MCP clients give up).',
          ),
        progressEveryMs: z
          .number()
          .int()
          .min(250)
          .max(30_000)
          .default(5_000)
          .describe('A progress notification this often while held (to clients that sent a progress token).'),
      })
      .strict()
      .default({ maxMs: 45_000, progressEveryMs: 5_000 }),
    resultTtlMs: z
      .number()
      .int()
      .min(60_000)
      .max(30 * 86_400_000)
      .default(86_400_000)
      .describe(
        "How long a confirm-tier call's outcome (its result, or the refusal) answers identical calls; then they are " +
          'asked about anew.',
      ),
    tasks: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('Offer MCP tasks for confirm-tier tools (`execution.taskSupport: "optional"`).'),
        defaultTtlMs: z
          .number()
          .int()
          .min(1_000)
          .max(7 * 86_400_000)
          .default(3_600_000)
          .describe("A task's life when the client asks for none."),
        maxTtlMs: z
          .number()
          .int()
          .min(1_000)
          .max(7 * 86_400_000)
          .default(86_400_000)
          .describe('The longest life a client may ask for (a longer one is cut to this).'),
        maxPerSession: z
          .number()
          .int()
          .min(1)
          .max(10_000)
          .default(100)
          .describe('Unfinished tasks one session may have at once.'),
      })
      .strict()
      .default({ enabled: true, defaultTtlMs: 3_600_000, maxTtlMs: 86_400_000, maxPerSession: 100 }),
  })
  .strict()
  .superRefine(usersHaveDefinedRoles);
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;
