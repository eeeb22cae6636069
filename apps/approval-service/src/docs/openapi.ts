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
  DecisionBodySchema,
  DecisionResultSchema,
  EmailDecisionFormSchema,
  NewStandingRuleSchema,
  NoticeDoneBodySchema,
  StandingRuleSchema,
} from '@countersign/contracts';

const schema = (s: z.ZodType) =>
  z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
const json = (s: z.ZodType, description = 'OK') => ({
  description,
  content: { 'application/json': { schema: schema(s) } },
});
const error = (description: string) => ({ description });
const callId = { name: 'callId', in: 'path', required: true, schema: { type: 'string' } };
const token = { name: 'token', in: 'path', required: true, schema: { type: 'string' } };
const bearer = [{ approverToken: [] }];

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
      },
      schemas: {
        ApprovalView: schema(ApprovalViewSchema),
        AuditEntry: schema(AuditEntrySchema),
        AuditVerification: schema(AuditVerificationSchema),
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
      '/approvals/{callId}': {
        get: {
          summary: 'One request',
          security: bearer,
          parameters: [callId],
          responses: { '200': json(ApprovalViewSchema), '404': error('unknown or not routed to you') },
        },
      },
      '/approvals/{callId}/decisions': {
        post: {
          summary: 'Approve or deny (a single deny decides; approvals count towards the quorum)',
          security: bearer,
          parameters: [callId],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schema(DecisionBodySchema) } },
          },
          responses: {
            '200': json(DecisionResultSchema, 'decided by this vote'),
            '202': json(DecisionResultSchema, 'vote counted; quorum not reached'),
            '400': error('body invalid (fields named)'),
            '401': error('no approver token'),
            '403': error('not in a routed group, or your own request'),
            '404': error('unknown call'),
            '409': error(
              'already decided (by whom), you already voted, or the arguments were edited since you looked',
            ),
            '410': error('expired'),
          },
        },
      },
      '/approvals/{callId}/done': {
        post: {
          summary: 'A manual-step notice: you did the step (the run’s model is told, with your note)',
          security: bearer,
          parameters: [callId],
          requestBody: {
            required: false,
            content: { 'application/json': { schema: schema(NoticeDoneBodySchema) } },
          },
          responses: {
            '200': { description: 'marked done; `next` says what happens next' },
            '403': error('not in a routed group, or your own request'),
            '404': error('unknown call'),
            '409': error('already marked done, or not a notice'),
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
            'Accept a trust suggestion ({fromCallId}) or write a rule ({tool, requester, args?}): its calls are approved by policy until it expires (7d by default) or is revoked',
          security: bearer,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schema(NewStandingRuleSchema) } },
          },
          responses: {
            '201': json(StandingRuleSchema, 'created'),
            '400': error('body invalid, unknown tool or requester (fields named)'),
            '403': error('not a rule-writer; a manual_only tool; or your own calls'),
            '409': error('the request carries no trust suggestion'),
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
          summary: 'Web inbox (sign in with ?token= or the form; sets an HttpOnly SameSite=Strict cookie)',
          responses: { '200': { description: 'HTML page' } },
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
          summary: 'Audit entries, oldest first',
          security: bearer,
          parameters: ['runId', 'callId', 'limit'].map((name) => ({
            name,
            in: 'query',
            required: false,
            schema: { type: 'string' },
          })),
          responses: { '200': json(z.array(AuditEntrySchema)) },
        },
      },
      '/audit/verify': {
        get: {
          summary: 'Is every writer’s hash chain intact, and where does one break',
          security: bearer,
          responses: { '200': json(AuditVerificationSchema) },
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
