// The `policy` section of a service's config: JSON rules (the default), or a Cedar policy set in their place, and a
// shadow Cedar set evaluated beside whichever is active, to compare.
import { z } from 'zod';

const DirectorySchema = z
  .string()
  .min(1)
  .max(500)
  .describe(
    'A directory holding `schema.cedarschema` and the `*.cedar` policy files (relative paths from the working ' +
      'directory).',
  );

export const PolicyConfigSchema = z
  .object({
    cedar: DirectorySchema.optional().describe(
      'A Cedar policy set that decides RBAC, tiers and the people a call needs, in place of the JSON `roles`, ' +
        '`users` and tiers (docs/reference/cedar.md). Validated against its schema at start-up: an invalid policy ' +
        'stops the service naming the policy, file and line.',
    ),
    shadow: z
      .object({ cedar: DirectorySchema })
      .strict()
      .optional()
      .describe(
        'A Cedar policy set evaluated beside the active rules on every call: each disagreement is logged and ' +
          'counted (`countersign_policy_shadow_disagreements_total`), nothing is decided by it.',
      ),
  })
  .strict();
export type PolicyConfig = z.infer<typeof PolicyConfigSchema>;
