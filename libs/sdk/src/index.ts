// @countersign/sdk: approvals for agents Countersign does not run. Plain Node (20+), no framework: a client of the
// approvals API, guard() around a tool's execution, and the fingerprint every Countersign service computes.
// Adapters: @countersign/sdk/openai-agents (OpenAI Agents SDK), @countersign/sdk/ai-sdk (Vercel AI SDK).
export {
  canonicalJson,
  fingerprint,
  printableReadableForm,
  readableForm,
} from '@countersign/authorization/fingerprint';
export type {
  ClaimResult,
  ExternalApprovalView,
  ExternalRefusalReason,
  WebhookPayload,
} from '@countersign/contracts/external-approvals.schema';
export {
  CountersignClient,
  type ClaimOutcome,
  type CountersignClientOptions,
  type ExternalCall,
  type ReadOptions,
  type RequesterOptions,
  type WaitOptions,
} from './countersign-client';
export { notRunMessage } from './decision-messages';
export { CountersignApiError, CountersignError } from './errors';
export { guardCall, type GuardOptions, type GuardResult, type GuardedExecute } from './guard';
export { checkRequester, requesterMismatch } from './requester';
export {
  verifyWebhook,
  verifyWebhookSignature,
  WEBHOOK_HEADERS,
  type WebhookDelivery,
  type WebhookVerification,
} from './webhooks';
