// The approval service's configuration: environment variables plus the approvals file, validated once at start-up.
// Nothing else in the service reads process.env.
import { z } from 'zod';
import {
  BaseEnvSchema,
  ConfigError,
  DurationSchema,
  loadEnv,
  loadJsonConfig,
  PrincipalsConfigSchema,
  rateLimitSetting,
  TrustProxySchema,
  type PrincipalsConfig,
} from '@countersign/platform';
import { MIN_AUDIT_RETENTION_MS } from '@countersign/audit';
import { ApprovalsConfigSchema, type ApprovalsConfig } from './approvals-config.schema';

/** Shards of the approval state (APPROVAL_SHARDS): one unless configured, at most 16 (see core/approval-keys.ts). */
export const DEFAULT_APPROVAL_SHARDS = 1;
export const MAX_APPROVAL_SHARDS = 16;

export const ApprovalServiceEnvSchema = BaseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3001),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Inline JSON (starts with "{") or a path to the groups / rules file. */
  APPROVALS_CONFIG: z.string().min(1).default('config/approvals.json'),
  /** Base of links in emails; defaults to the address the service listens on. */
  PUBLIC_URL: z.url().optional(),
  /** Signs email-link tokens, inbox session cookies and sign-in links. */
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
  /**
   * Shards of the approval state, each its own hash tag, so on a Redis Cluster requests spread over the masters
   * (core/approval-keys.ts). Change it only with no request open: a request is looked for in the shard of the count now.
   */
  APPROVAL_SHARDS: z.coerce.number().int().min(1).max(MAX_APPROVAL_SHARDS).default(DEFAULT_APPROVAL_SHARDS),
  /** How long audit entries stay; the timer sweep trims older ones behind a signed checkpoint. */
  AUDIT_RETENTION: DurationSchema.refine(
    (ms) => ms >= MIN_AUDIT_RETENTION_MS,
    'must be at least 1d (a writer keeps a chain for up to an hour of quiet; retention must never cut one in use)',
  ).default(90 * 86_400_000),
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
  /**
   * Signs the webhooks of external approvals; each client gets its own secret derived from this one
   * (GET /external-approvals/webhook-secret). Without it, submissions that ask for a webhook are refused.
   */
  WEBHOOK_SIGNING_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Origins (`https://host[:port]`, comma-separated) a webhook may be sent to; any other URL is refused at
   * submission, so a client cannot make the service call arbitrary (internal) addresses.
   */
  WEBHOOK_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((list, ctx) => {
      const origins: string[] = [];
      for (const entry of list
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean)) {
        const origin = URL.canParse(entry) ? new URL(entry).origin : 'null';
        if (origin === 'null' || !/^https?:/.test(origin))
          ctx.addIssue({ code: 'custom', message: `"${entry}" is not an http(s) origin` });
        else origins.push(origin);
      }
      return origins;
    }),
  /**
   * Decisions per principal and window (`<requests>/<window>`, or `off`): POST /approvals/:callId/decisions by the
   * API, the CLI and the inbox. A person working through a queue decides a few a minute; a machine client more.
   */
  RATE_LIMIT_DECISIONS: rateLimitSetting('120/1m'),
  RATE_LIMIT_DECISIONS_MACHINE: rateLimitSetting('600/1m'),
  /** Decisions per source address, credential or not: the REST route and the email link's POST. */
  RATE_LIMIT_DECISIONS_ADDRESS: rateLimitSetting('600/1m'),
  /** Slack interactions per source address (Slack's own servers send everyone's clicks: keep it generous). */
  RATE_LIMIT_SLACK_ADDRESS: rateLimitSetting('1200/1m'),
  /** One-time sign-in links per principal (POST /inbox/sign-in-links). */
  RATE_LIMIT_SIGN_IN: rateLimitSetting('10/1m'),
  /** Sign-in attempts per source address (POST /inbox/session with a token or code, and sign-in links). */
  RATE_LIMIT_SIGN_IN_ADDRESS: rateLimitSetting('30/1m'),
  /**
   * Submissions to the approvals API (POST /external-approvals) per client principal, whomever it acts for: a client
   * such as the MCP gateway submits for many people, and every retry of a call counts too.
   */
  RATE_LIMIT_EXTERNAL_SUBMISSIONS: rateLimitSetting('1200/1m'),
  /** Those submissions per person a client acts for (`onBehalfOf`), whichever clients send them. */
  RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER: rateLimitSetting('60/1m'),
  /** Those submissions per source address, credential or not. */
  RATE_LIMIT_EXTERNAL_SUBMISSIONS_ADDRESS: rateLimitSetting('2400/1m'),
  /** The proxies whose X-Forwarded-For names the client's address (hop count or addresses/subnets); unset: none. */
  TRUST_PROXY: TrustProxySchema.optional(),
  /**
   * Past this many requests of one requester in one NOTIFY_DIGEST_WINDOW, further requests are not posted or emailed
   * one by one: each Slack channel and approver gets one digest at the window's end (how many more wait, a link to
   * the inbox). The requests are routed and decidable as usual. `off`: never digest.
   */
  NOTIFY_DIGEST_AFTER: z
    .union([z.literal('off').transform(() => undefined), z.coerce.number().int().min(1).max(1_000_000)])
    .default(20),
  NOTIFY_DIGEST_WINDOW: DurationSchema.default(60_000).refine((ms) => ms >= 1_000, 'must be at least 1s'),
}).superRefine((env, ctx) => {
  if (env.WEBHOOK_ALLOWED_ORIGINS.length > 0 && !env.WEBHOOK_SIGNING_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['WEBHOOK_SIGNING_SECRET'],
      message: 'is required when WEBHOOK_ALLOWED_ORIGINS is set',
    });
  }
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
  principals: PrincipalsConfig;
}

/** Injection token of the validated configuration. */
export const APPROVAL_SERVICE_CONFIG = Symbol('ApprovalServiceConfig');

export function loadApprovalServiceConfig(raw: Record<string, string | undefined>): ApprovalServiceConfig {
  const env = loadEnv(ApprovalServiceEnvSchema, raw);
  const approvals = loadJsonConfig('APPROVALS_CONFIG', env.APPROVALS_CONFIG, ApprovalsConfigSchema);
  const principals = loadJsonConfig('PRINCIPALS_CONFIG', env.PRINCIPALS_CONFIG, PrincipalsConfigSchema);
  checkMembers(approvals, principals);
  return { env, approvals, principals };
}

/**
 * Every group member is a principal, and no client that may act for others is an approver: a run it started for a
 * user must never be decided by it (separation of duties covers the submitter as well as the requester).
 */
function checkMembers(approvals: ApprovalsConfig, principals: PrincipalsConfig): void {
  const byId = new Map(principals.principals.map((p) => [p.id, p]));
  const problems: string[] = [];
  approvals.groups.forEach((group, g) =>
    group.members.forEach((member, m) => {
      const principal = byId.get(member);
      const where = `APPROVALS_CONFIG groups.${g}.members.${m}`;
      if (!principal) problems.push(`  ${where}: unknown principal "${member}" (not in PRINCIPALS_CONFIG)`);
      else if (principal.actAs.length > 0)
        problems.push(`  ${where}: "${member}" may act for others (actAs), so it may not approve`);
    }),
  );
  if (problems.length > 0) throw new ConfigError(`invalid configuration:\n${problems.join('\n')}`);
}
