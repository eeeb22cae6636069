// The groups / routing rules file (APPROVALS_CONFIG). Who the approvers are (names, emails, Slack users, credentials)
// is the principal directory's (PRINCIPALS_CONFIG), shared with the agent worker. Cross-references are checked here and
// in loadApprovalServiceConfig, so a typo in a group or member name stops the service at start-up instead of silently
// routing nowhere.
import { z } from 'zod';
import { IdSchema, TierSchema } from '@countersign/contracts';
import { SubmissionAdmissionConfigSchema } from '@countersign/admission';
import { DurationSchema, type Principal } from '@countersign/platform';

export const ChannelSchema = z.enum(['slack', 'email', 'web']);
export type Channel = z.infer<typeof ChannelSchema>;

const GlobsSchema = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** An approver is a principal of PRINCIPALS_CONFIG that is a member of a group here. */
export type Approver = Principal;

export const GroupSchema = z.object({
  id: IdSchema.describe("The group's ID, as rules name it."),
  members: z
    .array(IdSchema)
    .min(1)
    .describe(
      'Principal IDs of `PRINCIPALS_CONFIG` (checked at start-up; a machine client with `actAs` may not be one). Who ' +
        "they are (name, email, Slack user, tokens) is the directory's.",
    ),
  slackChannel: z
    .string()
    .min(1)
    .max(80)
    .optional()
    .describe('The Slack channel its requests are posted in.'),
});
export type Group = z.infer<typeof GroupSchema>;

export const RuleMatchSchema = z
  .object({
    tool: GlobsSchema.optional().describe('Tool-name globs.'),
    tier: z
      .union([TierSchema, z.array(TierSchema).min(1)])
      .optional()
      .describe('The tiers it matches.'),
    agent: GlobsSchema.optional().describe(
      'Agent-name globs (an approvals client or the MCP gateway is the agent).',
    ),
    requester: GlobsSchema.optional().describe('Requester (principal ID) globs.'),
    args: z
      .record(z.string().min(1), GlobsSchema)
      .optional()
      .describe(
        'Argument path (dots for nesting) → the glob its scalar value must match, e.g. `{ "service": "payments*" }`.',
      ),
  })
  .strict();
export type RuleMatch = z.infer<typeof RuleMatchSchema>;

export const EscalationSchema = z
  .object({
    after: DurationSchema.describe('How long after the request it fires (shorter than its expiry).'),
    groups: z
      .array(IdSchema)
      .min(1)
      .describe('The groups added to the route and notified; their members may decide too.'),
  })
  .strict();

export const RuleSchema = z
  .object({
    name: z.string().min(1).max(100).optional().describe('Shown to approvers with why the rule matched.'),
    match: RuleMatchSchema.default({}).describe(
      'Every condition given must match; none given matches every request.',
    ),
    groups: z.array(IdSchema).min(1).describe('The groups whose members may decide.'),
    channels: z
      .array(ChannelSchema)
      .min(1)
      .optional()
      .describe('Where they are asked; unset: `defaults.channels`, else all three.'),
    quorum: z
      .number()
      .int()
      .min(1)
      .max(32)
      .optional()
      .describe('Distinct approvals needed (a single deny decides); unset: `defaults.quorum`, else 1.'),
    expiresIn: DurationSchema.optional().describe(
      'Undecided this long, the request is denied as expired; unset: `defaults.expiresIn`, else ' +
        '`APPROVAL_DEFAULT_EXPIRY`.',
    ),
    escalation: EscalationSchema.optional().describe(
      'More groups asked after a delay; unset: `defaults.escalation`.',
    ),
  })
  .strict();
export type Rule = z.infer<typeof RuleSchema>;

export const ApprovalsConfigSchema = z
  .object({
    /** Refused by name: approvers are principals now (PRINCIPALS_CONFIG), shared with the agent worker. */
    approvers: z
      .undefined({
        error:
          'approvers moved to PRINCIPALS_CONFIG (with their token hashes, never the tokens); list only groups here',
      })
      .optional(),
    groups: z.array(GroupSchema).describe('The approver groups.'),
    rules: z
      .array(RuleSchema)
      .default([])
      .describe('The routing rules, in order: the first whose every condition matches routes the request.'),
    defaultGroup: IdSchema.optional().describe(
      'Where a request that matches no rule goes; unset: it is denied with "no approver route".',
    ),
    defaults: z
      .object({
        channels: z.array(ChannelSchema).min(1).optional().describe('For rules that name none.'),
        quorum: z.number().int().min(1).max(32).optional().describe('For rules that name none.'),
        expiresIn: DurationSchema.optional().describe('For rules that name none.'),
        escalation: EscalationSchema.optional().describe('For rules that name none.'),
      })
      .strict()
      .default({})
      .describe("What a rule that does not say gets (and the `defaultGroup`'s requests)."),
    admission: SubmissionAdmissionConfigSchema.optional().describe(
      'Admission hooks asked about calls submitted to the approvals API (`POST /external-approvals`), signed like ' +
        'the worker\'s; see the guide "Admission hooks".',
    ),
  })
  .strict()
  .superRefine((config, ctx) => {
    const groupIds = new Set(config.groups.map((g) => g.id));
    const unknownGroup = (id: string, path: PropertyKey[]) => {
      if (!groupIds.has(id)) ctx.addIssue({ code: 'custom', path, message: `unknown group "${id}"` });
    };
    config.rules.forEach((rule, r) => {
      // An escalation that would fire after the request expired never happens: say so at start-up.
      const expiresIn = rule.expiresIn ?? config.defaults.expiresIn;
      if (rule.escalation && expiresIn !== undefined && rule.escalation.after >= expiresIn)
        ctx.addIssue({
          code: 'custom',
          path: ['rules', r, 'escalation', 'after'],
          message: "must be shorter than the rule's expiresIn, or the escalation never fires",
        });
      rule.groups.forEach((id, i) => unknownGroup(id, ['rules', r, 'groups', i]));
      rule.escalation?.groups.forEach((id, i) => unknownGroup(id, ['rules', r, 'escalation', 'groups', i]));
    });
    config.defaults.escalation?.groups.forEach((id, i) =>
      unknownGroup(id, ['defaults', 'escalation', 'groups', i]),
    );
    if (config.defaultGroup) unknownGroup(config.defaultGroup, ['defaultGroup']);
    const seenGroups = new Set<string>();
    config.groups.forEach((group, g) => {
      if (seenGroups.has(group.id))
        ctx.addIssue({ code: 'custom', path: ['groups', g, 'id'], message: 'must be unique' });
      seenGroups.add(group.id);
    });
  });
export type ApprovalsConfig = z.infer<typeof ApprovalsConfigSchema>;
