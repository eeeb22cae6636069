// The approval service's configuration: environment variables plus the approvals file, validated once at start-up.
// Nothing else in the service reads process.env.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { BaseEnvSchema, ConfigError, loadEnv } from '@countersign/platform';
import { ApprovalsConfigSchema, type ApprovalsConfig } from './approvals-config.schema';
import { DurationSchema } from './duration';

export const ApprovalServiceEnvSchema = BaseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3001),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Inline JSON (starts with "{") or a path to the approvers / groups / rules file. */
  APPROVALS_CONFIG: z.string().min(1).default('config/approvals.json'),
  /** Base of links in emails; defaults to the address the service listens on. */
  PUBLIC_URL: z.url().optional(),
  /** Signs email-link tokens and inbox session cookies. */
  LINK_TOKEN_SECRET: z.string().min(16, 'must be at least 16 characters'),
  /** Slack is disabled when no bot token is set. */
  SLACK_BOT_TOKEN: z.string().min(1).optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  SLACK_API_URL: z.url().default('https://slack.com/api/'),
  /** e.g. smtp://user:pass@mail:1025; or SMTP_HOST / SMTP_PORT. Without either, mail goes to the log. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .optional(),
  SMTP_HOST: z.string().min(1).optional(),
  SMTP_PORT: z.coerce.number().int().min(1).max(65_535).default(587),
  MAIL_FROM: z.string().min(3).default('Countersign <countersign@localhost>'),
  /** Expiry of a request whose rule and defaults name none. */
  APPROVAL_DEFAULT_EXPIRY: DurationSchema.default(30 * 60_000),
  /** How long settled requests stay readable through the API. */
  APPROVAL_RETENTION: DurationSchema.default(7 * 86_400_000),
  NOTIFY_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(6),
  NOTIFY_BACKOFF: DurationSchema.default(1_000),
  /** Slack and email deliveries handled at once per replica. */
  NOTIFY_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(16),
  /**
   * Attempts an agent worker gets at applying a decision job (stored in each job this service publishes), with
   * exponential backoff starting at DECISION_BACKOFF.
   */
  DECISION_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(5),
  DECISION_BACKOFF: DurationSchema.default(500),
  /** Approval requests handled at once per replica. */
  REQUEST_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(64),
  /** How often each replica sweeps the due expiry and escalation timers (ms): how late a timer may run. */
  TIMER_SWEEP_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /**
   * How long a sweep owns the timers it took (ms) before another replica may retry them, and how long a
   * settled request's decision may stay unpublished before a sweep publishes it (its decider is presumed dead).
   */
  TIMER_LEASE_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
}).superRefine((env, ctx) => {
  if (env.SLACK_BOT_TOKEN && !env.SLACK_SIGNING_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['SLACK_SIGNING_SECRET'],
      message: 'is required when SLACK_BOT_TOKEN is set',
    });
  }
});
export type ApprovalServiceEnv = z.infer<typeof ApprovalServiceEnvSchema>;

export interface ApprovalServiceConfig {
  env: ApprovalServiceEnv;
  approvals: ApprovalsConfig;
}

/** Injection token of the validated configuration. */
export const APPROVAL_SERVICE_CONFIG = Symbol('ApprovalServiceConfig');

export function loadApprovalServiceConfig(raw: Record<string, string | undefined>): ApprovalServiceConfig {
  const env = loadEnv(ApprovalServiceEnvSchema, raw);
  return { env, approvals: loadApprovalsConfig(env.APPROVALS_CONFIG) };
}

function loadApprovalsConfig(source: string): ApprovalsConfig {
  const inline = source.trimStart().startsWith('{');
  let text = source;
  if (!inline) {
    try {
      text = readFileSync(resolve(source), 'utf8');
    } catch (error) {
      throw new ConfigError(
        `invalid configuration:\n  APPROVALS_CONFIG: cannot read ${source}: ${(error as Error).message}`,
      );
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `invalid configuration:\n  APPROVALS_CONFIG: not valid JSON: ${(error as Error).message}`,
    );
  }
  const parsed = ApprovalsConfigSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map(
    (i) => `  APPROVALS_CONFIG ${i.path.join('.') || '(root)'}: ${i.message}`,
  );
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}
