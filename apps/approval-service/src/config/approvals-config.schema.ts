// The groups / routing rules file (APPROVALS_CONFIG). Who the approvers are (names, emails, Slack users, credentials)
// is the principal directory's (PRINCIPALS_CONFIG), shared with the agent worker. Cross-references are checked here and
// in loadApprovalServiceConfig, so a typo in a group or member name stops the service at start-up instead of silently
// routing nowhere.
import { z } from 'zod';
import { IdSchema, TierSchema } from '@countersign/contracts';
import { DurationSchema, type Principal } from '@countersign/platform';

export const ChannelSchema = z.enum(['slack', 'email', 'web']);
export type Channel = z.infer<typeof ChannelSchema>;

const GlobsSchema = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** An approver is a principal of PRINCIPALS_CONFIG that is a member of a group here. */
export type Approver = Principal;

export const GroupSchema = z.object({
  id: IdSchema,
  members: z.array(IdSchema).min(1),
  slackChannel: z.string().min(1).max(80).optional(),
});
export type Group = z.infer<typeof GroupSchema>;

export const RuleMatchSchema = z
  .object({
    tool: GlobsSchema.optional(),
    tier: z.union([TierSchema, z.array(TierSchema).min(1)]).optional(),
    agent: GlobsSchema.optional(),
    requester: GlobsSchema.optional(),
    /** Argument path (dots for nesting) → glob its value must match, e.g. `{ "service": "payments*" }`. */
    args: z.record(z.string().min(1), GlobsSchema).optional(),
  })
  .strict();
export type RuleMatch = z.infer<typeof RuleMatchSchema>;

export const EscalationSchema = z
  .object({ after: DurationSchema, groups: z.array(IdSchema).min(1) })
  .strict();

export const RuleSchema = z
  .object({
    name: z.string().min(1).max(100).optional(),
    match: RuleMatchSchema.default({}),
    groups: z.array(IdSchema).min(1),
    channels: z.array(ChannelSchema).min(1).optional(),
    quorum: z.number().int().min(1).max(32).optional(),
    expiresIn: DurationSchema.optional(),
    escalation: EscalationSchema.optional(),
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
    groups: z.array(GroupSchema),
    rules: z.array(RuleSchema).default([]),
    /** Where a request that matches no rule goes; without one it is denied "no approver route". */
    defaultGroup: IdSchema.optional(),
    defaults: z
      .object({
        channels: z.array(ChannelSchema).min(1).optional(),
        quorum: z.number().int().min(1).max(32).optional(),
        expiresIn: DurationSchema.optional(),
        escalation: EscalationSchema.optional(),
      })
      .strict()
      .default({}),
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
