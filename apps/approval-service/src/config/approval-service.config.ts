// The approval service's configuration: environment variables plus the approvals file, validated once at start-up.
// Nothing else in the service reads process.env.
import { z } from 'zod';
import { type ResolvedHook, resolveHooks } from '@countersign/admission';
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
import { MissingSecretError, SecretSource } from '@countersign/tool-providers';
import { ApprovalsConfigSchema, type ApprovalsConfig } from './approvals-config.schema';

/** Shards of the approval state (APPROVAL_SHARDS): one unless configured, at most 16 (see core/approval-keys.ts). */
export const DEFAULT_APPROVAL_SHARDS = 1;
export const MAX_APPROVAL_SHARDS = 16;

export const ApprovalServiceEnvSchema = BaseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3001).describe('The HTTP port.'),
  HOST: z.string().min(1).default('0.0.0.0').describe('The address the HTTP server listens on.'),
  APPROVALS_CONFIG: z
    .string()
    .min(1)
    .default('config/approvals.json')
    .describe('The groups and routing rules (below): a path, or inline JSON (starting with `{`).'),
  PUBLIC_URL: z
    .url()
    .optional()
    .describe(
      'The base URL of the links the service sends out (emails, Slack messages, inbox links); unset: the address it ' +
        'listens on.',
    ),
  LINK_TOKEN_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters')
    .describe('HMAC secret of email-link tokens, inbox session cookies and sign-in links.'),
  SLACK_BOT_TOKEN: z
    .string()
    .min(1)
    .optional()
    .describe("The Slack app's bot token; Slack is off without it."),
  SLACK_SIGNING_SECRET: z
    .string()
    .min(1)
    .optional()
    .describe('Verifies `X-Slack-Signature` on interactions; required with `SLACK_BOT_TOKEN`.'),
  SLACK_API_URL: z
    .url()
    .default('https://slack.com/api/')
    .describe('The Slack Web API base (tests point it at a local stand-in).'),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .optional()
    .describe(
      'The mail server, e.g. `smtp://user:pass@mail:1025`; or `SMTP_HOST` and `SMTP_PORT`. Without either, mails ' +
        'are written to the log (never dropped).',
    ),
  SMTP_HOST: z.string().min(1).optional().describe("The mail server's host, when `SMTP_URL` is not set."),
  SMTP_PORT: z.coerce.number().int().min(1).max(65_535).default(587).describe('The port of `SMTP_HOST`.'),
  MAIL_FROM: z
    .string()
    .min(3)
    .default('Countersign <countersign@localhost>')
    .describe('The sender of every email.'),
  APPROVAL_DEFAULT_EXPIRY: DurationSchema.prefault('30m').describe(
    'The expiry of a request whose rule and `defaults` name none.',
  ),
  APPROVAL_RETENTION: DurationSchema.prefault('7d').describe(
    'Settled requests stay readable this long; the timer sweep then drops them from the decided and expired lists.',
  ),
  // approval-keys.ts: a request is looked for in the shard of the count now.
  APPROVAL_SHARDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_APPROVAL_SHARDS)
    .default(DEFAULT_APPROVAL_SHARDS)
    .describe(
      'Shards of the approval state, each its own hash tag, so on a Redis Cluster requests spread over the masters. ' +
        'Change it only with no request open.',
    ),
  AUDIT_RETENTION: DurationSchema.refine(
    (ms) => ms >= MIN_AUDIT_RETENTION_MS,
    'must be at least 1d (a writer keeps a chain for up to an hour of quiet; retention must never cut one in use)',
  )
    .prefault('90d')
    .describe(
      'Audit entries stay this long (at least `1d`); the timer sweep trims older ones behind a signed checkpoint.',
    ),
  NOTIFY_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(50)
    .default(6)
    .describe('Attempts at each delivery: a Slack post, an email, a webhook.'),
  NOTIFY_BACKOFF: DurationSchema.prefault('1s').describe(
    'The first delay between those attempts (exponential backoff).',
  ),
  NOTIFY_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(16)
    .describe('Deliveries (Slack, email, webhooks) handled at once per replica.'),
  // Stored in each decision job this service publishes.
  DECISION_ATTEMPTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(50)
    .default(5)
    .describe('Attempts an agent worker gets at applying a published decision.'),
  DECISION_BACKOFF: DurationSchema.prefault('500ms').describe(
    'The first delay between those attempts (exponential backoff).',
  ),
  REQUEST_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000)
    .default(64)
    .describe('Approval requests taken off the queue at once per replica.'),
  TIMER_SWEEP_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(60_000)
    .default(1_000)
    .describe('How often each replica runs the due expiry and escalation timers: how late a timer may run.'),
  TIMER_LEASE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(30_000)
    .describe(
      'How long a sweep owns the timers it took before another replica may retry them, and how long a settled ' +
        "request's decision may stay unpublished before a sweep publishes it (its decider is presumed dead).",
    ),
  WEBHOOK_SIGNING_SECRET: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe(
      "Signs the approvals API's webhooks; each client gets a secret derived from it " +
        '(`GET /external-approvals/webhook-secret`). Required with `WEBHOOK_ALLOWED_ORIGINS`.',
    ),
  // A client must not make the service call arbitrary (internal) addresses.
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
    })
    .describe(
      'The only origins (`https://host[:port]`, comma-separated) a webhook may be sent to; any other URL is refused ' +
        'at submission. Unset: no webhooks.',
    ),
  // A person working through a queue decides a few a minute; a machine client more.
  RATE_LIMIT_DECISIONS: rateLimitSetting('120/1m').describe(
    'Decisions per person principal: `POST /approvals/:id/decisions` and `…/done` (API, CLI, inbox), and standing ' +
      'rules written or revoked.',
  ),
  RATE_LIMIT_DECISIONS_MACHINE: rateLimitSetting('600/1m').describe('Decisions per machine principal.'),
  RATE_LIMIT_DECISIONS_ADDRESS: rateLimitSetting('600/1m').describe(
    "Decisions per source address, credential or not: those routes and the email link's `POST /approve/:token`.",
  ),
  RATE_LIMIT_SLACK_ADDRESS: rateLimitSetting('1200/1m').describe(
    "`POST /slack/interactions` per source address (Slack's servers send everyone's clicks: keep it generous).",
  ),
  RATE_LIMIT_SIGN_IN: rateLimitSetting('10/1m').describe(
    'One-time sign-in links per principal (`POST /inbox/sign-in-links`).',
  ),
  RATE_LIMIT_SIGN_IN_ADDRESS: rateLimitSetting('30/1m').describe(
    'Sign-in attempts per source address (`POST /inbox/session` with a token or code, and sign-in links).',
  ),
  RATE_LIMIT_EXTERNAL_SUBMISSIONS: rateLimitSetting('1200/1m').describe(
    '`POST /external-approvals` per client principal, whomever it acts for (a client such as the MCP gateway ' +
      'submits for many people; retries count too).',
  ),
  RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER: rateLimitSetting('60/1m').describe(
    'Those submissions per person a client acts for (`onBehalfOf`), whichever clients send them.',
  ),
  RATE_LIMIT_EXTERNAL_SUBMISSIONS_ADDRESS: rateLimitSetting('2400/1m').describe(
    'Those submissions per source address, with or without a valid credential.',
  ),
  TRUST_PROXY: TrustProxySchema.optional().describe(
    "The proxies whose `X-Forwarded-For` names the client's address, for the per-address rate limits; unset: none " +
      '(the TCP peer is the address).',
  ),
  NOTIFY_DIGEST_AFTER: z
    .union([z.literal('off').transform(() => undefined), z.coerce.number().int().min(1).max(1_000_000)])
    .default(20)
    .describe(
      'Requests of one requester per `NOTIFY_DIGEST_WINDOW` posted and emailed one by one; past it, each Slack ' +
        "channel and approver gets one digest at the window's end (the requests are routed and decidable as usual). " +
        '`off`: never digest.',
    ),
  NOTIFY_DIGEST_WINDOW: DurationSchema.prefault('1m')
    .refine((ms) => ms >= 1_000, 'must be at least 1s')
    .describe("The digest's window (at least `1s`); each digest goes out when its window ends."),
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
  /** APPROVALS_CONFIG's `admission.beforeTool` hooks with their secrets read from the environment. */
  admissionHooks: ResolvedHook[];
}

/** Injection token of the validated configuration. */
export const APPROVAL_SERVICE_CONFIG = Symbol('ApprovalServiceConfig');

export function loadApprovalServiceConfig(raw: Record<string, string | undefined>): ApprovalServiceConfig {
  const env = loadEnv(ApprovalServiceEnvSchema, raw);
  const rules = loadApprovalRules(env.APPROVALS_CONFIG, env.PRINCIPALS_CONFIG);
  return { env, ...rules, admissionHooks: submissionHooks(rules.approvals, raw) };
}

/** The approvals API's admission hooks, each with its secret; a secret not set stops start-up naming it. */
function submissionHooks(
  approvals: ApprovalsConfig,
  raw: Record<string, string | undefined>,
): ResolvedHook[] {
  // Read as the worker and the gateway read theirs: the variable, or the file `<name>_FILE` names.
  const secrets = new SecretSource(raw);
  const secretOf = (variable: string) => {
    try {
      return secrets.secret({ $secret: variable });
    } catch (error) {
      if (error instanceof MissingSecretError) return undefined;
      throw error;
    }
  };
  try {
    return resolveHooks(
      approvals.admission?.beforeTool ?? [],
      secretOf,
      'APPROVALS_CONFIG: admission.beforeTool',
    );
  } catch (error) {
    throw new ConfigError(`invalid configuration:\n  ${(error as Error).message}`);
  }
}

/**
 * The groups and routing rules with the principal directory, checked against each other: what the service routes by
 * (also read by `countersign policy test`). Each is a path, or inline JSON.
 */
export function loadApprovalRules(
  approvalsConfig: string,
  principalsConfig: string,
): Pick<ApprovalServiceConfig, 'approvals' | 'principals'> {
  const approvals = loadJsonConfig('APPROVALS_CONFIG', approvalsConfig, ApprovalsConfigSchema);
  const principals = loadJsonConfig('PRINCIPALS_CONFIG', principalsConfig, PrincipalsConfigSchema);
  checkMembers(approvals, principals);
  return { approvals, principals };
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
