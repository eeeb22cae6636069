// The OpenAPI document, built from the same zod schemas that validate the requests (no hand-written twins).
import type { INestApplication } from '@nestjs/common';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { z } from 'zod';
import {
  APPROVAL_LIST_ORDER,
  APPROVAL_PAGE_LIMIT,
  ApprovalListQuerySchema,
  ApprovalViewSchema,
  AuditEntrySchema,
  AuditVerificationSchema,
  ClaimBodySchema,
  ClaimResultSchema,
  CompletionBodySchema,
  DecisionBodySchema,
  DecisionResultSchema,
  EmailDecisionFormSchema,
  EXTERNAL_MAX_WAIT_MS,
  ExternalApprovalViewSchema,
  ExternalRefusalSchema,
  ExternalSubmissionSchema,
  WebhookPayloadSchema,
  WebhookSecretSchema,
  NewStandingRuleSchema,
  NoticeDoneBodySchema,
  SignInLinkSchema,
  StandingRuleSchema,
} from '@countersign/contracts';

const schema = (s: z.ZodType) =>
  z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
const json = (s: z.ZodType, description = 'OK') => ({
  description,
  content: { 'application/json': { schema: schema(s) } },
});
const error = (description: string) => ({ description });
const requestOrCallId = {
  name: 'id',
  in: 'path',
  required: true,
  description:
    'a request ID, or a call ID that names one request (409 when it names requests of several runs)',
  schema: { type: 'string' },
};
const token = { name: 'token', in: 'path', required: true, schema: { type: 'string' } };
const bearer = [{ approverToken: [] }];
const approvalId = {
  name: 'approvalId',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^xa-[0-9a-f]{32}$' },
};
const refusal = (description: string) => json(ExternalRefusalSchema, description);
/** Every route of an approval names the person it was submitted for, as its submission did. */
const onBehalfOfQuery = {
  name: 'onBehalfOf',
  in: 'query',
  required: false,
  description: 'The person the approval was submitted for (left out: the client itself)',
  schema: { type: 'string' },
};
const NOT_THEIRS = 'unknown, submitted by another client, or for another person than onBehalfOf';
const body = (s: z.ZodType) => ({ required: true, content: { 'application/json': { schema: schema(s) } } });

export function openApiDocument(): OpenAPIObject {
  const status = (ApprovalListQuerySchema.shape.status.unwrap() as z.ZodEnum).options;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Countersign approval service',
      version: '0.1.0',
      description: 'Routes approval requests to people; publishes signed, fingerprinted decisions.',
    },
    components: {
      securitySchemes: {
        approverToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'An approver apiToken from APPROVALS_CONFIG',
        },
        clientToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'A machine principal of PRINCIPALS_CONFIG with the approvals-client role',
        },
      },
      schemas: {
        ApprovalView: schema(ApprovalViewSchema),
        AuditEntry: schema(AuditEntrySchema),
        AuditVerification: schema(AuditVerificationSchema),
        ExternalApprovalView: schema(ExternalApprovalViewSchema),
        WebhookPayload: schema(WebhookPayloadSchema),
      },
    },
    paths: {
      '/approvals': {
        get: {
          summary: 'Requests routed to the caller’s groups, one page at a time',
          description:
            'Each list in score order: pending by creation, decided and expired by when they were settled. ' +
            `Without \`status\`, the lists follow one another: ${APPROVAL_LIST_ORDER.join(', ')} (manual-step ` +
            'notices are listed only then). `limit` bounds the entries read; requests routed to other groups are ' +
            'left out after reading, so a page may hold fewer, even none, and still be followed by another. Follow ' +
            'the `Link` header (`rel="next"`) until it is absent; an entry that stays in its list meanwhile is ' +
            'returned exactly once.',
          security: bearer,
          parameters: [
            { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: status } },
            {
              name: 'limit',
              in: 'query',
              required: false,
              description: 'Entries to read for this page',
              schema: {
                type: 'integer',
                minimum: 1,
                maximum: APPROVAL_PAGE_LIMIT.max,
                default: APPROVAL_PAGE_LIMIT.default,
              },
            },
            {
              name: 'cursor',
              in: 'query',
              required: false,
              description: 'Opaque: taken from the `Link` header of the previous page',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              ...json(z.array(ApprovalViewSchema)),
              headers: {
                Link: {
                  description:
                    'Present when more entries follow: `</approvals?…&cursor=…>; rel="next"` (RFC 8288), with the same status and limit',
                  schema: { type: 'string' },
                },
              },
            },
            '400': error('bad query: status, limit or cursor (named)'),
            '401': error('no approver token'),
          },
        },
      },
      '/approvals/{id}': {
        get: {
          summary: 'One request',
          security: bearer,
          parameters: [requestOrCallId],
          responses: {
            '200': json(ApprovalViewSchema),
            '404': error('unknown or not routed to you'),
            '409': error('a call ID used by requests of several runs: name the request ID'),
          },
        },
      },
      '/approvals/{id}/decisions': {
        post: {
          summary:
            'Approve, deny or respond (a single deny or respond decides; approvals count towards the quorum)',
          description:
            '`respond` answers with text (`response`, 1 to 4,000 characters, required with it) instead of a verdict: ' +
            'the call does not run, and the agent’s model gets the text as the call’s result, naming who responded.',
          security: bearer,
          parameters: [requestOrCallId],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schema(DecisionBodySchema) } },
          },
          responses: {
            '200': json(DecisionResultSchema, 'decided by this vote'),
            '202': json(
              DecisionResultSchema,
              'vote counted, quorum not reached; or (status rerouted) your edit routed the request to groups you are not in: the edit stands, your vote does not count',
            ),
            '400': error(
              'body invalid (fields named); edited arguments that do not fit the tool (invalid_edit) or that no route takes (unroutable_edit)',
            ),
            '401': error('no approver token'),
            '403': error(
              'your own request, or not in the groups of its current route (a request you can see: routed to you, or one you voted on or edited)',
            ),
            '404': error('unknown request, or one not routed to you (the same answer)'),
            '409': error(
              'already decided (by whom), you already voted, the arguments were edited since you looked, the request was routed anew or escalated while your vote was checked, or a call ID used by requests of several runs',
            ),
            '410': error('expired'),
          },
        },
      },
      '/approvals/{id}/done': {
        post: {
          summary: 'A manual-step notice: you did the step (the run’s model is told, with your note)',
          security: bearer,
          parameters: [requestOrCallId],
          requestBody: {
            required: false,
            content: { 'application/json': { schema: schema(NoticeDoneBodySchema) } },
          },
          responses: {
            '200': { description: 'marked done; `next` says what happens next' },
            '403': error('your own request (a notice you can see)'),
            '404': error('unknown request, or one not routed to you (the same answer)'),
            '409': error('already marked done, not a notice, or a call ID used by requests of several runs'),
          },
        },
      },
      '/standing-rules': {
        get: {
          summary: 'The standing rules in force (approvers and rule-writers)',
          security: bearer,
          responses: {
            '200': json(z.array(StandingRuleSchema)),
            '403': error('neither approver nor rule-writer'),
          },
        },
        post: {
          summary:
            'Accept a trust suggestion ({fromCallId}: a request ID, or a call ID that names one request) or write a rule ({tool, requester, args?}): its calls are approved by policy until it expires (7d by default) or is revoked',
          security: bearer,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schema(NewStandingRuleSchema) } },
          },
          responses: {
            '201': json(StandingRuleSchema, 'created'),
            '400': error('body invalid, unknown tool or requester (fields named)'),
            '403': error(
              'not a rule-writer; a manual_only tool or runbook_gate; your own calls; or calls that could be routed to a quorum above one',
            ),
            '409': error(
              'the request carries no trust suggestion, or fromCallId names requests of several runs',
            ),
          },
        },
      },
      '/standing-rules/{id}': {
        delete: {
          summary: 'Revoke a standing rule: from the next request on, a person decides again',
          security: bearer,
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': json(StandingRuleSchema, 'revoked'),
            '403': error('not a rule-writer'),
            '404': error('no such rule'),
          },
        },
      },
      '/external-approvals': {
        post: {
          summary: 'Submit a tool call of an agent Countersign does not run, for a decision',
          description:
            'Routed, notified, decided and expired like the worker’s requests; the caller is the client (never the ' +
            'one who decides). `allow`: approved, claim before running; `deny`: refused (`decidedBy`, `reason`); ' +
            '`respond`: an approver answered with text (`response`, by `approvers`): do not run it, give the text to ' +
            'your model as the call’s result; ' +
            '`pending`: wait for it. Submitting the same run, call ID and arguments for the same person again returns ' +
            'the same approval; other arguments, or another person (`onBehalfOf`), make another one. Rate limited per ' +
            'source address, per client and per person acted for.',
          security: [{ clientToken: [] }],
          requestBody: body(ExternalSubmissionSchema),
          responses: {
            '201': json(ExternalApprovalViewSchema, 'a new approval'),
            '200': json(ExternalApprovalViewSchema, 'the approval this call already has'),
            '400': error('body invalid (fields named), or a webhook URL that is not allowed'),
            '401': error('no credential'),
            '403': error('no approvals-client role, or may not act for onBehalfOf'),
            '429': error('too many submissions (the limit and its variable named; see Retry-After)'),
          },
        },
      },
      '/external-approvals/webhook-secret': {
        get: {
          summary: 'The caller’s webhook signing secret',
          description:
            'Webhooks are POSTed with `X-Countersign-Request-Timestamp` (Unix seconds) and `X-Countersign-Signature: ' +
            'v1=<hex HMAC-SHA256(secret, "v1:" + timestamp + ":" + raw body)>`; refuse timestamps older than 5 minutes. ' +
            'The body is a WebhookPayload.',
          security: [{ clientToken: [] }],
          responses: { '200': json(WebhookSecretSchema), '404': error('webhooks are not enabled') },
        },
      },
      '/external-approvals/{approvalId}': {
        get: {
          summary: 'One of the caller’s approvals; with waitMs, once decided (bounded wait)',
          security: [{ clientToken: [] }],
          parameters: [
            approvalId,
            {
              name: 'waitMs',
              in: 'query',
              required: false,
              description: 'Answer when decided, at most this long from now; pending after that',
              schema: { type: 'integer', minimum: 0, maximum: EXTERNAL_MAX_WAIT_MS, default: 0 },
            },
            onBehalfOfQuery,
          ],
          responses: {
            '200': json(ExternalApprovalViewSchema),
            '400': error('bad approval ID, waitMs or onBehalfOf (named)'),
            '403': error('may not act for onBehalfOf'),
            '404': refusal(NOT_THEIRS),
          },
        },
      },
      '/external-approvals/{approvalId}/claim': {
        post: {
          summary: 'Claim the approved call before running it (single use)',
          description:
            'Send the fingerprint of the call about to run; run exactly the returned arguments, only after a 200.',
          security: [{ clientToken: [] }],
          parameters: [approvalId],
          requestBody: body(ClaimBodySchema),
          responses: {
            '200': json(ClaimResultSchema, 'claimed: run it'),
            '400': error('body invalid (fields named)'),
            '403': refusal('denied; or may not act for onBehalfOf'),
            '404': refusal(NOT_THEIRS),
            '409': refusal('already claimed, not decided yet, or the fingerprint does not match'),
            '410': refusal('expired'),
          },
        },
      },
      '/external-approvals/{approvalId}/completion': {
        post: {
          summary: 'Report how running the claimed call went (once; written to the audit log)',
          security: [{ clientToken: [] }],
          parameters: [approvalId],
          requestBody: body(CompletionBodySchema),
          responses: {
            '200': json(ExternalApprovalViewSchema),
            '400': error('body invalid (fields named)'),
            '403': error('may not act for onBehalfOf'),
            '404': refusal(NOT_THEIRS),
            '409': refusal('not claimed, or already reported'),
          },
        },
      },
      '/approve/{token}': {
        get: {
          summary: 'Email link: confirmation page (decides nothing)',
          parameters: [token],
          responses: { '200': { description: 'HTML page' } },
        },
        post: {
          summary: 'Email link: decide (single use)',
          parameters: [token],
          requestBody: {
            required: true,
            content: { 'application/x-www-form-urlencoded': { schema: schema(EmailDecisionFormSchema) } },
          },
          responses: {
            '200': { description: 'HTML page' },
            '409': { description: 'link used or already decided' },
          },
        },
      },
      '/slack/interactions': {
        post: {
          summary: 'Slack interactivity endpoint (X-Slack-Signature verified)',
          responses: { '200': error('handled'), '401': error('bad signature, stale or replayed') },
        },
      },
      '/inbox': {
        get: {
          summary:
            'Web inbox of the signed-in approver or rule-writer (an HttpOnly SameSite=Strict session cookie); without a session, the sign-in form (a token in the address is refused)',
          responses: { '200': { description: 'HTML page' } },
        },
      },
      '/inbox/sign-in-links': {
        post: {
          summary:
            'A one-time link (5 minutes, once) that signs your browser in to your inbox; for approvers and rule-writers',
          security: bearer,
          responses: {
            '201': json(SignInLinkSchema),
            '403': error('neither approver nor rule-writer'),
          },
        },
      },
      '/inbox/events': {
        get: {
          summary: 'Server-sent events for the inbox (`change`)',
          responses: { '200': { description: 'text/event-stream' } },
        },
      },
      '/audit': {
        get: {
          summary: 'Audit entries you may read, newest page first, each page oldest first',
          description:
            'Entries of requests routed to your groups (and of runs you may read); every entry with the ' +
            '`audit-reader` role. One request reads at most 10,000 stream entries, newest first: follow the `Link` ' +
            'header (`rel="next"`) to older pages until it is absent. A page may hold fewer entries than `limit`, ' +
            'even none, while a `Link` says older ones remain.',
          security: bearer,
          parameters: [
            ...['runId', 'callId'].map((name) => ({
              name,
              in: 'query',
              required: false,
              schema: { type: 'string' },
            })),
            {
              name: 'limit',
              in: 'query',
              required: false,
              description: 'Entries to return at most',
              schema: { type: 'integer', minimum: 1, maximum: 10_000, default: 1_000 },
            },
            {
              name: 'cursor',
              in: 'query',
              required: false,
              description: 'Taken from the `Link` header of the previous page',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              ...json(z.array(AuditEntrySchema)),
              headers: {
                Link: {
                  description:
                    'Present when older entries remain: `</audit?…&cursor=…>; rel="next"` (RFC 8288), same filter and limit',
                  schema: { type: 'string' },
                },
              },
            },
            '400': error('bad query: runId, callId, limit or cursor (named)'),
            '401': error('no credential'),
          },
        },
      },
      '/audit/verify': {
        get: {
          summary:
            'Is every writer’s HMAC chain intact (from the retention checkpoint on), and where does one break',
          security: bearer,
          responses: {
            '200': json(AuditVerificationSchema),
            '401': error('no credential'),
            '403': error('the audit-reader role is required'),
          },
        },
      },
      '/health': {
        get: {
          summary:
            'Redis, queue and timer health (timers: scheduled, and past due: a growing `due` means sweeps fall behind)',
          responses: { '200': error('ok'), '503': error('Redis unreachable') },
        },
      },
      '/metrics': {
        get: { summary: 'Prometheus metrics', responses: { '200': error('text exposition format') } },
      },
    },
  } as OpenAPIObject;
}

/** Swagger UI at /docs, the document at /docs-json. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, openApiDocument());
}
