// Helpers between pipeline outcomes, parked calls, approval requests and model messages.
import { createHash } from 'node:crypto';
import { CallState } from '@countersign/call-ledger';
import type { CallerContext, ToolCallOutcome } from '@countersign/authorization';
import {
  excerpt,
  newRequestId,
  REQUEST_CONTEXT_LIMITS,
  type ApprovalRequest,
  type ChatMessage,
  type PendingCall,
  type RequestContext,
  type RequestPrecondition,
  RunEventName,
  type RunEvent,
} from '@countersign/contracts';
import type { ModelToolCall } from '../models/chat-model';
import type { CallResult, FrontierCall, ParkedCallBody, RunRecord } from './run-state';

/** What one call of a fresh turn becomes in the frontier. */
export function toFrontierCall(call: ModelToolCall, index: number, outcome: ToolCallOutcome): FrontierCall {
  const body: ParkedCallBody = {
    id: call.id,
    name: call.name,
    args: call.args,
    tier: 'auto',
    fingerprint: '',
    definitionHash: '',
    attempt: 0,
    reason: 'confirmation_required',
    position: index,
  };
  if (outcome.kind === 'pending_confirmation') {
    return {
      state: CallState.Pending,
      body: {
        ...body,
        args: outcome.args as Record<string, unknown>,
        tier: outcome.tier,
        fingerprint: outcome.fingerprint,
        definitionHash: outcome.definitionHash,
        // Its own request, even when the model reused an earlier turn's call ID (or another run's).
        requestId: newRequestId(),
        ...(outcome.route ? { route: outcome.route } : {}),
        ...(outcome.precondition ? { precondition: outcome.precondition } : {}),
      },
    };
  }
  return { state: CallState.Done, body, result: { outcome: outcome.kind, content: outcome.content } };
}

export function isWaiting(call: FrontierCall): boolean {
  return call.state === CallState.Pending;
}

/** The tool messages the model gets once every call of the turn is settled, in call order. */
export function toolMessages(frontier: FrontierCall[]): ChatMessage[] {
  return frontier.map((call) => ({
    role: 'tool' as const,
    toolCallId: call.body.id,
    name: call.body.name,
    content: call.result?.content ?? '',
  }));
}

/**
 * `withRequestId`: GET /runs says which request a call waits for, and its precondition; events leave them out (the
 * history stays small).
 */
export function toPendingCall(body: ParkedCallBody, { withRequestId = false } = {}): PendingCall {
  return {
    callId: body.id,
    ...(withRequestId && body.requestId ? { requestId: body.requestId } : {}),
    toolName: body.name,
    args: body.args,
    tier: body.tier,
    fingerprint: body.fingerprint,
    ...(withRequestId && body.precondition ? { precondition: body.precondition as RequestPrecondition } : {}),
  };
}

/**
 * Without the tool's description: it would sit in every parked request. The approval service reads it from the tool
 * catalog by the definition hash. `context` is short by construction (see callContext).
 */
export function toApprovalRequest(
  run: { runId: string; agent: string; userId: string; submittedBy?: string },
  body: ParkedCallBody & { requestId: string },
  context: RequestContext = {},
): ApprovalRequest {
  return {
    requestId: body.requestId,
    callId: body.id,
    runId: run.runId,
    agent: run.agent,
    requester: run.userId,
    ...(run.submittedBy ? { submittedBy: run.submittedBy } : {}),
    toolName: body.name,
    toolDescription: '',
    args: body.args,
    tier: body.tier,
    fingerprint: body.fingerprint,
    toolDefinitionHash: body.definitionHash,
    reason: body.reason,
    attempt: body.attempt,
    requestedAt: new Date().toISOString(),
    ...(Object.keys(context).length > 0 ? { context } : {}),
    // Its value came out of canonical JSON (see evaluatePrecondition), so it is JSON.
    ...(body.precondition ? { precondition: body.precondition as RequestPrecondition } : {}),
    ...(body.route?.policy
      ? { policy: policyOf(body.route, body.route.policy) }
      : body.route
        ? { admission: admissionOf(body.route) }
        : {}),
  };
}

function policyOf(
  route: NonNullable<ParkedCallBody['route']>,
  policy: { id: string; condition: string },
): NonNullable<ApprovalRequest['policy']> {
  return {
    id: policy.id,
    // A condition longer than the contract carries is cut, never refused: the policy's ID names it in full.
    condition: policy.condition.length > 1_000 ? `${policy.condition.slice(0, 999)}…` : policy.condition,
    ...(route.groups ? { groups: route.groups } : {}),
    ...(route.quorum ? { quorum: route.quorum } : {}),
  };
}

function admissionOf(route: NonNullable<ParkedCallBody['route']>): NonNullable<ApprovalRequest['admission']> {
  return {
    hook: route.by,
    ...(route.groups ? { groups: route.groups } : {}),
    ...(route.quorum ? { quorum: route.quorum } : {}),
  };
}

/**
 * What approvers are told a call is for: the run's input and the text the model wrote before asking for the call,
 * both shortened, and the tool's preview when there is one.
 */
export function callContext(
  messages: readonly ChatMessage[],
  callId: string,
  preview?: string,
): RequestContext {
  const input = messages.find((m) => m.role === 'user')?.content;
  const asked = [...messages]
    .reverse()
    .find((m) => m.role === 'assistant' && m.toolCalls?.some((call) => call.id === callId));
  const context: RequestContext = {};
  const shortInput = excerpt(input, REQUEST_CONTEXT_LIMITS.input);
  if (shortInput) context.input = shortInput;
  const modelText = excerpt(
    asked?.role === 'assistant' ? asked.content : undefined,
    REQUEST_CONTEXT_LIMITS.modelText,
  );
  if (modelText) context.modelText = modelText;
  if (preview) context.preview = preview;
  return context;
}

/** The same call, asked about again: next attempt, a new request, with why (and possibly re-parsed arguments). */
export function reasked(
  body: ParkedCallBody,
  reason: ParkedCallBody['reason'],
  changes: Partial<ParkedCallBody> = {},
): ParkedCallBody & { requestId: string } {
  return { ...body, ...changes, attempt: body.attempt + 1, reason, requestId: newRequestId() };
}

/** A call that waits for a request: parked and pending, or a notice. */
export function hasRequest(body: ParkedCallBody): body is ParkedCallBody & { requestId: string } {
  return typeof body.requestId === 'string' && body.requestId !== '';
}

/**
 * The notice sent to approvers when a manual_only call is due (nothing to approve; the run goes on). Its request ID
 * is derived from the run, the turn and the call, so a turn that runs again (it is not checkpointed) sends the same
 * notice, which the queue deduplicates, instead of a second one.
 */
export function manualStepBody(
  run: { runId: string },
  turn: number,
  call: ModelToolCall,
  args: Record<string, unknown>,
  fingerprint: string,
  definitionHash: string,
): ParkedCallBody & { requestId: string } {
  const digest = createHash('sha256').update(`${run.runId}\n${turn}\n${call.id}`).digest('base64url');
  return {
    id: call.id,
    name: call.name,
    args,
    tier: 'manual_only',
    fingerprint,
    definitionHash,
    attempt: 0,
    reason: 'manual_step',
    requestId: `n${digest.slice(0, 16)}`,
    position: 0,
  };
}

/** Who a run's calls are made for, as the pipeline checks them (RBAC, callbacks, previews). */
export function callerOf(run: RunRecord): CallerContext {
  return { runId: run.runId, agent: run.agent, userId: run.userId, scopes: run.scopes };
}

/** What a run's followers are told when a call of its frontier is settled: its result, as the model gets it. */
export function toolResultEvent(
  runId: string,
  call: { id: string; name: string },
  result: CallResult,
): RunEvent {
  return { type: RunEventName.ToolResult, runId, callId: call.id, toolName: call.name, ...result };
}
