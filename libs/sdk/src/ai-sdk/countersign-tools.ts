// Countersign for the AI SDK (`ai` 6, from 6.0.202): its tool approval is answered by Countersign, and `execute` is
// guarded. The guard is what makes a forged or replayed approval in a client's message history run nothing: the AI SDK
// executes a tool call it believes approved, but the call runs only if Countersign approved exactly these arguments
// for this run, call and person, and only once.
import type { ModelMessage, ToolApprovalResponse, ToolSet } from 'ai';
import { fingerprint } from '@countersign/authorization/fingerprint';
import type { CountersignClient, ExternalCall } from '../countersign-client';
import { notApprovedMessage, notRunMessage } from '../decision-messages';
import { CountersignError } from '../errors';
import { checkRequester } from '../requester';

export interface CountersignToolsOptions {
  client: CountersignClient;
  /** The conversation (chat, job) the calls belong to: with the tool call ID, what makes a call the same call. */
  runId: string;
  /** The person the agent acts for (the client needs an `actAs` entry for them). */
  onBehalfOf?: string;
  /** What the conversation is for, shown to approvers. */
  runDescription?: string;
}

export interface ApprovalResponsesOptions extends CountersignToolsOptions {
  /**
   * How long to wait for decisions in all.
   * @defaultValue 0: answer only what is decided now
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface CountersignApprovals {
  /** Add these to the messages (`{ role: 'tool', content: responses }`) and call generateText/streamText again. */
  responses: ToolApprovalResponse[];
  /** Still undecided: wait (or let the webhook tell you), then ask again. */
  pending: { approvalId: string; toolCallId: string; toolName: string; inboxUrl: string }[];
}

/**
 * The tools, each with an `execute`, made to ask Countersign: every call of theirs needs approval (the AI SDK asks
 * for it; answer with approvalResponses), and runs only as Countersign approved it, once. Tools without `execute`
 * (run by the client) are left as they are.
 */
export function countersignTools<TOOLS extends ToolSet>(
  tools: TOOLS,
  options: CountersignToolsOptions,
): TOOLS {
  const wrapped: Record<string, unknown> = {};
  for (const [toolName, original] of Object.entries(tools)) {
    const execute = original.execute;
    if (typeof execute !== 'function') {
      wrapped[toolName] = original;
      continue;
    }
    const description = typeof original.description === 'string' ? original.description : undefined;
    wrapped[toolName] = {
      ...original,
      // Always true: the AI SDK re-resolves this when it replays an approval from the history, and treats false as
      // "no approval was needed", refusing the approval. The submission makes the approval exist in Countersign.
      needsApproval: async (input: unknown, { toolCallId }: { toolCallId: string }) => {
        await options.client.submit(callFor(options, toolName, description, input, toolCallId));
        return true;
      },
      execute: async (input: unknown, execution: { toolCallId: string; abortSignal?: AbortSignal }) => {
        const call = callFor(options, toolName, description, input, execution.toolCallId);
        // Never waits: a call reaches execute when the history says it was approved, which proves nothing here.
        const result = await options.client.guard(call, () => execute(input as never, execution as never), {
          timeoutMs: 0,
        });
        return result.status === 'executed' ? result.value : notRunMessage(result);
      },
    };
  }
  return wrapped as TOOLS;
}

/**
 * Countersign's decisions for the tool approvals the AI SDK asked for in `messages` (the `tool-approval-request`
 * parts not answered yet), as `tool-approval-response` parts: approved when Countersign approved that call for
 * `onBehalfOf`, denied with the refusal (the reason, an expiry) otherwise. Throws (nothing is answered) when an answer
 * is not that call's approval.
 */
export async function approvalResponses(
  messages: readonly ModelMessage[],
  options: ApprovalResponsesOptions,
): Promise<CountersignApprovals> {
  const calls = new Map<string, { toolName: string; input: unknown }>();
  const answered = new Set<string>();
  const requests: { approvalId: string; toolCallId: string }[] = [];
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call')
        calls.set(part.toolCallId, { toolName: part.toolName, input: part.input });
      if (part.type === 'tool-approval-request') requests.push(part);
      if (part.type === 'tool-approval-response') answered.add(part.approvalId);
    }
  }
  const deadline = Date.now() + (options.timeoutMs ?? 0);
  const result: CountersignApprovals = { responses: [], pending: [] };
  for (const request of requests.filter((r) => !answered.has(r.approvalId))) {
    const call = calls.get(request.toolCallId);
    if (!call) throw new CountersignError(`approval ${request.approvalId} asks about an unknown tool call`);
    const submitted = await options.client.submit(
      callFor(options, call.toolName, undefined, call.input, request.toolCallId),
    );
    if (submitted.fingerprint !== fingerprint(call.toolName, call.input))
      throw new CountersignError(
        `approval ${submitted.approvalId} is for another call than ${request.toolCallId}`,
      );
    checkRequester(submitted, options.onBehalfOf);
    const view = await options.client.waitForDecision(submitted.approvalId, {
      timeoutMs: Math.max(0, deadline - Date.now()),
      signal: options.signal,
      onBehalfOf: options.onBehalfOf,
    });
    checkRequester(view, options.onBehalfOf);
    if (view.status === 'pending') {
      result.pending.push({
        approvalId: view.approvalId,
        toolCallId: request.toolCallId,
        toolName: call.toolName,
        inboxUrl: view.inboxUrl,
      });
      continue;
    }
    result.responses.push({
      type: 'tool-approval-response',
      approvalId: request.approvalId,
      approved: view.status === 'allow',
      // A respond is not approved: the model reads the approver's text as the reason, and re-plans.
      reason: view.status === 'allow' ? undefined : notApprovedMessage(call.toolName, view),
    });
  }
  return result;
}

function callFor(
  options: CountersignToolsOptions,
  toolName: string,
  toolDescription: string | undefined,
  input: unknown,
  toolCallId: string,
): ExternalCall {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new CountersignError(`${toolName}: only tools whose input is a JSON object can be approved`);
  return {
    runId: options.runId,
    callId: toolCallId,
    toolName,
    args: input as Record<string, unknown>,
    onBehalfOf: options.onBehalfOf,
    context: { runDescription: options.runDescription, toolDescription },
  };
}
