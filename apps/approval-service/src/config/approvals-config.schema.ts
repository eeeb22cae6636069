// The approvers / groups / routing rules file (APPROVALS_CONFIG). Cross-references are checked here,
// so a typo in a group name stops the service at start-up instead of silently routing nowhere.
import { z } from 'zod';
import { IdSchema, TierSchema } from '@countersign/contracts';
import { DurationSchema } from './duration';

export const ChannelSchema = z.enum(['slack', 'email', 'web']);
export type Channel = z.infer<typeof ChannelSchema>;

const GlobsSchema = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const ApproverSchema = z.object({
  id: IdSchema,
  name: z.string().min(1).max(200),
  email: z.email().optional(),
  slackUserId: z.string().min(1).max(40).optional(),
  /** Bearer token for the REST API and the inbox sign-in. */
  apiToken: z.string().min(16, 'must be at least 16 characters'),
});
export type Approver = z.infer<typeof ApproverSchema>;

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
    approvers: z.array(ApproverSchema),
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
    const approverIds = new Set(config.approvers.map((a) => a.id));
    const groupIds = new Set(config.groups.map((g) => g.id));
    const unknownGroup = (id: string, path: PropertyKey[]) => {
      if (!groupIds.has(id)) ctx.addIssue({ code: 'custom', path, message: `unknown group "${id}"` });
    };
    config.groups.forEach((group, g) =>
      group.members.forEach((member, m) => {
        if (!approverIds.has(member))
          ctx.addIssue({
            code: 'custom',
            path: ['groups', g, 'members', m],
            message: `unknown approver "${member}"`,
          });
      }),
    );
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
    for (const field of ['id', 'apiToken', 'slackUserId'] as const) {
      const seen = new Set<string>();
      config.approvers.forEach((a, i) => {
        const value = a[field];
        if (value === undefined) return;
        if (seen.has(value))
          ctx.addIssue({ code: 'custom', path: ['approvers', i, field], message: 'must be unique' });
        seen.add(value);
      });
    }
  });
export type ApprovalsConfig = z.infer<typeof ApprovalsConfigSchema>;
