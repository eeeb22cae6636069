// Standing rules: an approver with the rule-writer role lets one requester's calls of one tool (optionally only those
// whose arguments match) be approved by policy for a while, instead of asking a person each time. Created from a trust
// suggestion or written by hand; listed and revoked in the inbox, the CLI and the API.
import { z } from 'zod';
import { IdSchema, IsoDateSchema, ToolNameSchema } from './common.schema';

/** How long a rule decides unless told otherwise, and the most it may be given. */
export const STANDING_RULE_EXPIRY = { defaultMs: 7 * 86_400_000, maxMs: 90 * 86_400_000 } as const;

const ArgGlobsSchema = z.union([
  z.string().min(1).max(200),
  z.array(z.string().min(1).max(200)).min(1).max(20),
]);

/** Argument path (dots for nesting) → glob(s) its value must match, as in the routing rules of APPROVALS_CONFIG. */
export const StandingRuleArgsSchema = z
  .record(z.string().min(1).max(200), ArgGlobsSchema)
  .superRefine((args, ctx) => {
    const paths = Object.keys(args);
    if (paths.length > 10) ctx.addIssue({ code: 'custom', message: 'at most 10 argument patterns' });
    for (const path of paths)
      if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(path))
        ctx.addIssue({
          code: 'custom',
          path: [path],
          message: 'must be an argument path such as service or target.region',
        });
  });

export const StandingRuleSchema = z.object({
  id: IdSchema,
  tool: ToolNameSchema,
  /** The one requester whose calls it covers (never the rule's author). */
  requester: IdSchema,
  /** Only calls whose arguments match every pattern; absent: every call of the tool. */
  args: StandingRuleArgsSchema.optional(),
  createdBy: IdSchema,
  createdAt: IsoDateSchema,
  expiresAt: IsoDateSchema,
  /** The call ID of the request whose trust suggestion was accepted, when it was made from one. */
  fromCallId: IdSchema.optional(),
  note: z.string().max(500).optional(),
});
export type StandingRule = z.infer<typeof StandingRuleSchema>;

/** "30m", "12h", "7d" → milliseconds, from one hour to STANDING_RULE_EXPIRY.maxMs. */
const RuleExpirySchema = z
  .string()
  .regex(/^\d{1,4}(m|h|d)$/, 'must be a duration such as 12h or 7d')
  .transform((text) => {
    const [, amount, unit] = /^(\d+)(m|h|d)$/.exec(text)!;
    return Number(amount) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 'm' | 'h' | 'd'];
  })
  .refine((ms) => ms >= 3_600_000 && ms <= STANDING_RULE_EXPIRY.maxMs, 'must be from 1h to 90d');

/**
 * `POST /standing-rules`: accept the trust suggestion of a request (`fromCallId`: its tool and requester), or write a
 * rule (`tool` and `requester`, optionally `args`).
 */
export const NewStandingRuleSchema = z
  .object({
    /** The request whose suggestion is accepted: its request ID, or a call ID that names one request. */
    fromCallId: IdSchema.optional(),
    tool: ToolNameSchema.optional(),
    requester: IdSchema.optional(),
    args: StandingRuleArgsSchema.optional(),
    expiresIn: RuleExpirySchema.optional(),
    note: z.string().max(500).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    const written = body.tool !== undefined || body.requester !== undefined;
    if (body.fromCallId !== undefined && written)
      ctx.addIssue({
        code: 'custom',
        path: ['fromCallId'],
        message:
          'send either fromCallId (accept a suggestion) or tool and requester (write a rule), not both',
      });
    if (body.fromCallId === undefined && (body.tool === undefined || body.requester === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [body.tool === undefined ? 'tool' : 'requester'],
        message: 'is required (or send fromCallId to accept a trust suggestion)',
      });
  });
export type NewStandingRule = z.infer<typeof NewStandingRuleSchema>;

/** `POST /approvals/:id/done`: a person did the manual step of a notice. */
export const NoticeDoneBodySchema = z.object({ note: z.string().max(2_000).optional() }).strict();
export type NoticeDoneBody = z.infer<typeof NoticeDoneBodySchema>;
