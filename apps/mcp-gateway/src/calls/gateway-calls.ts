// One `tools/call` through the gateway: the policy pipeline first (registry, RBAC, arguments, callbacks, tier), then
// by its outcome: relayed at once (auto), decided by the approval service (confirm), never sent (manual-only, refused).
import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  type CallToolRequest,
  type CallToolResult,
  ErrorCode,
  McpError,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { ExternalApprovalView } from '@countersign/contracts';
import type { Logger, Principal } from '@countersign/platform';
import { AuditLog } from '@countersign/audit';
import { ProviderCallError } from '@countersign/tool-providers';
import { ConfirmedCalls } from '../approvals/confirmed-calls';
import { GatewayMetrics } from '../core/gateway-metrics';
import { GATEWAY_PRINCIPAL, LOGGER } from '../core/gateway-tokens';
import { GatewayCatalog } from '../tools/gateway-catalog';
import { errorResult, manualResult } from './call-results';
import { ToolRelay } from './tool-relay';

export interface CallContext {
  /** The request was cancelled, or its client went away (or its task ended). */
  signal: AbortSignal;
  /** Sends the client a progress notification (only when it sent a progress token). */
  progress?: (progress: Progress) => void;
  /** A confirm-tier call waits for its decision until then (ms since the epoch). */
  waitUntil: number;
  /** Called while a confirm-tier call waits for its decision. */
  onWaiting?: (view: ExternalApprovalView, waitedMs: number) => void;
  pollEveryMs: number;
  /** The MCP client's name and version, for approvers. */
  client?: string;
}

/** Unique across processes (a random part per process) without asking the RNG on every call. */
const PROCESS_ID = randomBytes(6).toString('hex');
let calls = 0;
function nextCallId(): string {
  return `mcp-${PROCESS_ID}-${(++calls).toString(36)}`;
}

/** A call's run ID in audit entries and approval requests: the caller's calls through the gateway, together. */
export function gatewayRunId(principal: string): string {
  return `mcp-${principal}`.slice(0, 128);
}

@Injectable()
export class GatewayCalls {
  constructor(
    private readonly catalog: GatewayCatalog,
    private readonly relay: ToolRelay,
    private readonly confirmed: ConfirmedCalls,
    private readonly audit: AuditLog,
    /** What the gateway is to the pipeline, the approval service's rules (`match.agent`) and the audit. */
    @Inject(GATEWAY_PRINCIPAL) private readonly self: Principal,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: GatewayMetrics,
  ) {}

  /** Answers one call as its tool's server would, or in its place (see call-results.ts). */
  async call(
    caller: Principal,
    params: CallToolRequest['params'],
    ctx: CallContext,
  ): Promise<CallToolResult> {
    const callId = nextCallId();
    const runId = gatewayRunId(caller.id);
    const where = { runId, callId, tool: params.name, requester: caller.id };
    const outcome = await this.catalog.pipeline.authorize(
      { id: callId, name: params.name, args: params.arguments ?? {} },
      this.callerContext(runId, caller.id),
    );
    const { progressToken: _theClients, ...meta } = params._meta ?? {};
    // What the pipeline made of the call (a confirm-tier call is counted once, as pending_confirmation).
    this.metrics.toolCalls.inc({ outcome: counted(outcome.kind) });
    switch (outcome.kind) {
      case 'ready': {
        const tool = this.catalog.tool(outcome.toolName);
        if (!tool) return errorResult(`Tool "${params.name}" is no longer offered; nothing ran.`);
        const relayed = await this.relayAuto(tool, outcome.args as Record<string, unknown>, meta, ctx, {
          runId,
          callId,
          userId: caller.id,
        });
        const result = await this.catalog.afterTool(outcome, this.callerContext(runId, caller.id), relayed);
        // Not awaited: the call already ran and its answer is on its way; the entry is written with the next batch
        // (a failure is logged). Waiting for it would add a Redis round trip to every relayed call.
        // A confirm-tier call its confirmation handler approved is the handler's (`handler:<name>`), as in the worker.
        void this.record({
          type: 'tool.executed',
          runId,
          callId,
          actor: outcome.policyDecision?.by ?? outcome.approvedBy,
          detail: {
            toolName: params.name,
            requester: caller.id,
            via: 'mcp-gateway',
            isError: result.isError === true,
            ...(outcome.policyDecision?.rule ? { rule: outcome.policyDecision.rule } : {}),
          },
        });
        return result;
      }
      case 'pending_confirmation': {
        const tool = this.catalog.tool(outcome.toolName);
        if (!tool) return errorResult(`Tool "${params.name}" is no longer offered; nothing ran.`);
        const named = namedApprovers(outcome.route);
        if (named) {
          // Fail closed: the approvals API routes the gateway's calls by APPROVALS_CONFIG and takes no route from a
          // client, so asking there would let people other than the ones named (or fewer of them) decide.
          const content =
            `Tool "${params.name}" was not run: ${outcome.route!.by} asks for ${named}, and the MCP gateway cannot ` +
            "send a call to named approvers (its calls are routed by the approval service's own rules).";
          this.logger.warn(
            { ...where, by: outcome.route!.by },
            'call refused: a route the gateway cannot keep',
          );
          await this.record({
            type: 'tool.denied',
            runId,
            callId,
            actor: 'no_route',
            detail: { toolName: params.name, requester: caller.id, via: 'mcp-gateway', reason: content },
          });
          return errorResult(content);
        }
        return this.confirmed.handle(
          {
            caller,
            tool,
            args: outcome.args as Record<string, unknown>,
            fingerprint: outcome.fingerprint,
            definitionHash: outcome.definitionHash,
            runId,
            meta,
            client: ctx.client,
          },
          {
            until: ctx.waitUntil,
            signal: ctx.signal,
            onWaiting: ctx.onWaiting,
            pollEveryMs: ctx.pollEveryMs,
            onprogress: ctx.progress,
          },
        );
      }
      case 'manual_required':
        this.logger.info(where, 'manual-only tool called: not forwarded');
        await this.record({
          type: 'tool.denied',
          runId,
          callId,
          actor: 'manual_only',
          detail: { toolName: params.name, requester: caller.id, via: 'mcp-gateway', reason: 'manual_only' },
        });
        return manualResult(params.name);
      case 'denied':
        this.logger.info({ ...where, by: outcome.by }, 'call refused');
        await this.record({
          type: 'tool.denied',
          runId,
          callId,
          actor: outcome.policyDecision?.by ?? outcome.by,
          detail: {
            toolName: params.name,
            requester: caller.id,
            via: 'mcp-gateway',
            reason: outcome.content,
            ...(outcome.policyDecision?.rule ? { rule: outcome.policyDecision.rule } : {}),
          },
        });
        return errorResult(outcome.content);
      case 'responded':
        // Only a decision passed to the pipeline responds, and the gateway passes none (its approvals come back
        // through ConfirmedCalls); answered the same way as there, in case that changes.
        return errorResult(outcome.content);
      case 'skipped':
        return { content: [{ type: 'text', text: outcome.content }] };
      case 'aborted':
      case 'error':
        this.logger.info({ ...where, outcome: outcome.kind }, 'call not run');
        return errorResult(outcome.content);
    }
  }

  /**
   * The server's answer as it came. Its refusals (JSON-RPC errors) reach the client as they came, too; a call that got
   * no answer (unreachable, timed out, cancelled) is an error result saying what is known.
   */
  private async relayAuto(
    tool: NonNullable<ReturnType<GatewayCatalog['tool']>>,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
    ctx: CallContext,
    ids: { runId: string; callId: string; userId: string },
  ): Promise<CallToolResult> {
    try {
      return await this.relay.relay(tool, args, {
        signal: ctx.signal,
        meta,
        onprogress: ctx.progress,
        ids: { ...ids, agent: this.self.id },
      });
    } catch (error) {
      if (error instanceof ProviderCallError && error.cause instanceof McpError) {
        const cause = error.cause;
        if (cause.code !== ErrorCode.ConnectionClosed && cause.code !== ErrorCode.RequestTimeout)
          throw new RelayedRpcError(cause.code, stripPrefix(cause.message), cause.data);
      }
      this.logger.warn({ ...ids, tool: tool.name, err: (error as Error).message }, 'auto call failed');
      return errorResult((error as Error).message);
    }
  }

  private callerContext(runId: string, userId: string) {
    return { runId, agent: this.self.id, userId, scopes: [] };
  }

  /** The audit entry; a failure to write it is logged, never hides what happened (the tool may have run). */
  private async record(entry: Parameters<AuditLog['append']>[0]): Promise<void> {
    try {
      await this.audit.append(entry);
    } catch (error) {
      this.logger.error(
        { runId: entry.runId, callId: entry.callId, err: (error as Error).message },
        'audit append failed',
      );
    }
  }
}

/** The `outcome` label of countersign_tool_calls_total for a pipeline outcome (the worker's names). */
function counted(kind: string): string {
  return kind === 'ready' ? 'executed' : kind;
}

/**
 * A server's JSON-RPC error, answered as it came: the SDK sends a thrown error's `code`, `message` and `data`. (An
 * McpError would prefix the message once more.)
 */
class RelayedRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = this.constructor.name;
  }
}

/** The client's McpError put "MCP error <code>: " before the message the server sent. */
function stripPrefix(message: string): string {
  return message.replace(/^MCP error -?\d+: /, '');
}

/** The approvers a hook's or a policy's confirm names (groups, a quorum), in words; undefined when it names none. */
function namedApprovers(route: { groups?: string[]; quorum?: number } | undefined): string | undefined {
  if (!route || (!route.groups?.length && route.quorum === undefined)) return undefined;
  const groups = route.groups?.length ? `group ${route.groups.join(', ')}` : 'approvers';
  return route.quorum === undefined ? groups : `${groups} with quorum ${route.quorum}`;
}
