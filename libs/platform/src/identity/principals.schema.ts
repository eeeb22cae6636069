// The principal directory (PRINCIPALS_CONFIG): every person and machine client that may call either service, with its
// credentials. Both services read the same file, so "bob" is one identity everywhere: the requester of a run is the
// same principal the approval service refuses to let decide it.
import { z } from 'zod';
import { IdSchema, IsoDateSchema, Sha256HexSchema } from '@countersign/contracts';
import { DurationSchema } from '../duration';

/**
 * What a principal may do beyond its own runs and the requests routed to its groups.
 * - `runs-reader`: read every run and its events (GET /runs/:id) — support staff, dashboards.
 * - `audit-reader`: read the whole audit log and verify it (GET /audit, /audit/verify).
 * - `metrics-reader`: scrape /metrics when it is served on the main port.
 * - `rule-writer`: create and revoke standing rules (a requester's calls of a tool approved by policy for a while),
 *   e.g. by accepting a trust suggestion; never for manual_only tools or for the writer's own calls.
 * - `approvals-client`: submit tool calls of agents Countersign does not run to the approvals API
 *   (`/external-approvals`), then read, claim and complete its own submissions.
 */
export const ServiceRoleSchema = z.enum([
  'runs-reader',
  'audit-reader',
  'metrics-reader',
  'approvals-client',
  'rule-writer',
]);
export type ServiceRole = z.infer<typeof ServiceRoleSchema>;

export const StoredTokenSchema = z
  .object({
    sha256: Sha256HexSchema.describe(
      'The lowercase hex SHA-256 of a bearer token, never the token (`npx countersign token new` prints a token and ' +
        'its hash; `token hash <token>` the hash).',
    ),
    label: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Where the token is used, for people reading the file ("laptop", "ci").'),
    expiresAt: IsoDateSchema.optional().describe(
      'After this instant the token is refused (rotation: add the new token, let the old one expire).',
    ),
  })
  .strict();
export type StoredToken = z.infer<typeof StoredTokenSchema>;

export const PrincipalSchema = z
  .object({
    id: IdSchema.describe("The principal's ID: what routing rules, groups, RBAC `users` and the audit name."),
    name: z.string().min(1).max(200).describe('Its name as people read it (the inbox, Slack, email).'),
    kind: z
      .enum(['person', 'machine'])
      .default('person')
      .describe(
        'People request runs and decide; machine clients call the APIs (CI, an agent framework, a gateway) and get ' +
          'the `…_MACHINE` rate limits.',
      ),
    email: z.email().optional().describe('Where approval emails go.'),
    slackUserId: z
      .string()
      .min(1)
      .max(40)
      .optional()
      .describe('The Slack user whose button clicks decide as this principal.'),
    tokens: z
      .array(StoredTokenSchema)
      .max(20)
      .default([])
      .describe("The hashes of this principal's bearer tokens (at most 20)."),
    // A machine principal is reached through OIDC only when this is set: see oidcSubjectOf.
    oidcSubject: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe(
        'The value of the OIDC claim (`oidc.claim`) that signs in as this principal. A person defaults to its ID; a ' +
          "machine principal is reached through OIDC only when this is set (a token whose subject is a machine's ID, " +
          'e.g. `mcp-gateway`, is refused).',
      ),
    roles: z
      .array(ServiceRoleSchema)
      .default([])
      .describe(
        'What it may do beyond its own runs and the requests routed to its groups: `runs-reader` (read every run), ' +
          '`audit-reader` (read the whole audit log and verify it), `metrics-reader` (scrape `/metrics`), ' +
          '`approvals-client` (submit calls to the approvals API), `rule-writer` (create and revoke standing rules).',
      ),
    policyGroups: z
      .array(IdSchema)
      .max(64)
      .default([])
      .describe(
        'The groups Cedar policies see it in (`principal in Group::"payments"`; docs/reference/cedar.md). Not the ' +
          'approver groups of APPROVALS_CONFIG, and unused by the JSON rules.',
      ),
    // The run and the audit then record both: the user as the requester, this client as the submitter.
    actAs: z
      .array(z.union([IdSchema, z.literal('*')]))
      .default([])
      .describe(
        'Machine clients only: the principals (or `"*"`) it may act for (`onBehalfOf`); such a client may not be an ' +
          'approver.',
      ),
  })
  .strict();
export type Principal = z.infer<typeof PrincipalSchema>;

export const OidcConfigSchema = z
  .object({
    issuer: z.url().describe('The `iss` every token must carry.'),
    audience: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .describe('The `aud` every token must carry (one of them).'),
    jwksUrl: z
      .url()
      .describe("The issuer's JSON Web Key Set (refetched when a token carries an unknown `kid`)."),
    claim: z
      .string()
      .min(1)
      .default('sub')
      .describe("The claim that names the principal (matched against `oidcSubject`, else a person's ID)."),
    algorithms: z
      .array(z.string().min(1))
      .min(1)
      .default(['RS256', 'ES256', 'EdDSA'])
      .describe('The accepted signing algorithms.'),
    // Issuers' defaults range from minutes to a day (e.g. Auth0's access tokens).
    maxTokenLifetime: DurationSchema.prefault('24h').describe(
      'The longest a token may be valid (`exp` − `iat`, counted from now when `iat` is absent or in the future); a ' +
        'token without `exp` is refused. Lower it to what your issuer gives.',
    ),
  })
  .strict();
export type OidcConfig = z.infer<typeof OidcConfigSchema>;

/**
 * The OIDC subject that signs in as `principal`, or undefined when none does. A machine principal (a gateway, CI, an
 * agent framework, often with `actAs`) is reached only through a subject its config names: an issuer that happens to
 * issue a token whose subject is its ID must not sign in as it.
 */
export function oidcSubjectOf(principal: Pick<Principal, 'id' | 'kind' | 'oidcSubject'>): string | undefined {
  return principal.oidcSubject ?? (principal.kind === 'person' ? principal.id : undefined);
}

export const PrincipalsConfigSchema = z
  .object({
    principals: z.array(PrincipalSchema).describe('Every person and machine client that may call a service.'),
    oidc: OidcConfigSchema.optional().describe(
      'Also accept JWT bearer tokens of this OpenID Connect issuer (signature, issuer, audience and expiry checked ' +
        'with `jose`).',
    ),
  })
  .strict()
  .superRefine((config, ctx) => {
    const ids = new Set(config.principals.map((p) => p.id));
    const unique = (values: [string | undefined, PropertyKey[]][], what: string) => {
      const seen = new Set<string>();
      for (const [value, path] of values) {
        if (value === undefined) continue;
        if (seen.has(value)) ctx.addIssue({ code: 'custom', path, message: `${what} must be unique` });
        seen.add(value);
      }
    };
    unique(
      config.principals.map((p, i) => [p.id, ['principals', i, 'id']]),
      'id',
    );
    unique(
      config.principals.map((p, i) => [p.slackUserId, ['principals', i, 'slackUserId']]),
      'slackUserId',
    );
    unique(
      config.principals.map((p, i) => [oidcSubjectOf(p), ['principals', i, 'oidcSubject']]),
      'oidcSubject (or the ID it defaults to)',
    );
    unique(
      config.principals.flatMap((p, i) =>
        p.tokens.map((t, j): [string, PropertyKey[]] => [t.sha256, ['principals', i, 'tokens', j, 'sha256']]),
      ),
      'a token hash',
    );
    config.principals.forEach((p, i) => {
      if (p.actAs.length > 0 && p.kind !== 'machine')
        ctx.addIssue({
          code: 'custom',
          path: ['principals', i, 'actAs'],
          message: 'only machine principals may act for others',
        });
      p.actAs.forEach((target, j) => {
        if (target !== '*' && !ids.has(target))
          ctx.addIssue({
            code: 'custom',
            path: ['principals', i, 'actAs', j],
            message: `unknown principal "${target}"`,
          });
      });
    });
  });
export type PrincipalsConfig = z.infer<typeof PrincipalsConfigSchema>;
