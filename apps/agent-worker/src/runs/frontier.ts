// Pure helpers between pipeline outcomes, parked calls, approval requests and model messages.
import type { ToolCallOutcome } from '@countersign/authorization';
import {
  excerpt,
  REQUEST_CONTEXT_LIMITS,
  type ApprovalRequest,
  type ChatMessage,
  type PendingCall,
  type RequestContext,
} from '@countersign/contracts';
import type { ModelToolCall } from '../models/chat-model';
import { CallState, type FrontierCall, type ParkedCallBody } from './run-state';

/** What one call of a fresh turn becomes in the frontier. */
export function toFrontierCall(call: ModelToolCall, index: number, outcome: ToolCallOutcome): FrontierCall {
  const body: ParkedCallBody = {
    id: call.id,
    name: call.name,
    args: call.args,
    tier: 'auto',
    fp: '',
    defHash: '',
    attempt: 0,
    reason: 'confirmation_required',
    i: index,
  };
  if (outcome.kind === 'pending_confirmation') {
    return {
      state: CallState.Pending,
      body: {
        ...body,
        args: outcome.args as Record<string, unknown>,
        tier: outcome.tier,
        fp: outcome.fingerprint,
        defHash: outcome.definitionHash,
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

export function toPendingCall(body: ParkedCallBody): PendingCall {
  return { callId: body.id, toolName: body.name, args: body.args, tier: body.tier, fingerprint: body.fp };
}

/**
 * Without the tool's description: it would sit in every parked request. The approval service reads it from the tool
 * catalog by the definition hash. `context` is short by construction (see callContext).
 */
export function toApprovalRequest(
  run: { runId: string; agent: string; userId: string; submittedBy?: string },
  body: ParkedCallBody,
  context: RequestContext = {},
): ApprovalRequest {
  return {
    callId: body.id,
    runId: run.runId,
    agent: run.agent,
    requester: run.userId,
    ...(run.submittedBy ? { submittedBy: run.submittedBy } : {}),
    toolName: body.name,
    toolDescription: '',
    args: body.args,
    tier: body.tier,
    fingerprint: body.fp,
    toolDefinitionHash: body.defHash,
    reason: body.reason,
    attempt: body.attempt,
    requestedAt: new Date().toISOString(),
    ...(Object.keys(context).length > 0 ? { context } : {}),
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

/** The same call, asked about again: next attempt, with why (and possibly re-parsed arguments). */
export function reasked(
  body: ParkedCallBody,
  reason: ParkedCallBody['reason'],
  changes: Partial<ParkedCallBody> = {},
): ParkedCallBody {
  return { ...body, ...changes, attempt: body.attempt + 1, reason };
}

/** The notice sent to approvers when a manual_only call is due (nothing to approve; the run goes on). */
export function manualStepBody(
  call: ModelToolCall,
  args: Record<string, unknown>,
  fp: string,
  defHash: string,
): ParkedCallBody {
  return {
    id: call.id,
    name: call.name,
    args,
    tier: 'manual_only',
    fp,
    defHash,
    attempt: 0,
    reason: 'manual_step',
    i: 0,
  };
}
