// Confirm-tier calls through the gateway. The decision is the approval service's (its approvals API, through the
// SDK's client, as the gateway's own principal acting for the caller), so routing, quorum, expiry, channels,
// separation of duties and the audit are the same as for every other call. Identical calls (one principal, tool and
// fingerprint) share one record in Redis and so one approval: approved, it runs once, claimed first (exactly once
// across requests, restarts and replicas); its result answers every identical call after it; denied or expired, so
// does the refusal. The tool runs only inside a live request or task: nothing runs for a client that went away.
import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { CallState, isSettled } from '@countersign/call-ledger';
import type { ExternalApprovalView } from '@countersign/contracts';
import type { Logger, Principal } from '@countersign/platform';
import { CountersignApiError, CountersignClient } from '@countersign/sdk';
import { ProviderCallError } from '@countersign/tool-providers';
import {
  errorResult,
  keptResult,
  pendingResult,
  refusedResult,
  respondedResult,
  unknownOutcomeResult,
} from '../calls/call-results';
import { ToolRelay } from '../calls/tool-relay';
import { GATEWAY_SETTINGS, type GatewaySettings } from '../config/gateway-settings';
import { GatewayMetrics } from '../core/gateway-metrics';
import { GATEWAY_PRINCIPAL, LOGGER } from '../core/gateway-tokens';
import { GatewayCatalog, type GatewayTool } from '../tools/gateway-catalog';
import { type CallRecord, CallRecordStore } from './call-record-store';

/** One confirm-tier call, authorized by the pipeline (RBAC, arguments, callbacks), waiting for a decision. */
export interface ConfirmCall {
  caller: Principal;
  tool: GatewayTool;
  args: Record<string, unknown>;
  fingerprint: string;
  definitionHash: string;
  /** The run ID under which the caller's calls are audited (`mcp-<principal>`). */
  runId: string;
  /** The client's `_meta`, passed on to the server when the call runs. */
  meta: Record<string, unknown>;
  /** The MCP client's name, shown to approvers. */
  client?: string;
}

export interface WaitOptions {
  /** When to stop waiting for the decision (ms since the epoch): the caller then gets the pending result. */
  until: number;
  /** The request (or task) ended: stop waiting, and never start the tool. */
  signal: AbortSignal;
  /** Called while the call waits, every `pollEveryMs` at most. */
  onWaiting?: (view: ExternalApprovalView, waitedMs: number) => void;
  pollEveryMs: number;
  /** The server's progress once the approved call runs. */
  onprogress?: (progress: Progress) => void;
}

type Step = { kind: 'result'; result: CallToolResult } | { kind: 'restart'; replace?: string };

/** A record is kept this long until its approval's expiry is known. */
const OPEN_TTL_MS = 3_600_000;
/** How long a runner's heartbeat (its claim) holds beyond the tool's own timeout, before another request may take over. */
const HEARTBEAT_MARGIN_MS = 30_000;
/** How often a request that waits for an identical call's run looks for its outcome. */
const OUTCOME_POLL_MS = 100;
/** A record that keeps starting over (its tool keeps changing, its approval keeps vanishing) is given up on. */
const MAX_RESTARTS = 3;

@Injectable()
export class ConfirmedCalls {
  /** How long an outcome answers identical calls (GATEWAY_CONFIG `resultTtlMs`). */
  private readonly resultTtlMs: number;

  constructor(
    private readonly client: CountersignClient,
    private readonly store: CallRecordStore,
    private readonly catalog: GatewayCatalog,
    private readonly relay: ToolRelay,
    /** The gateway's own principal: it submits the approvals. */
    @Inject(GATEWAY_PRINCIPAL) private readonly self: Principal,
    @Inject(GATEWAY_SETTINGS) { config }: GatewaySettings,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: GatewayMetrics,
  ) {
    this.resultTtlMs = config.resultTtlMs;
  }

  /** The call's outcome now, or after waiting for its decision until `wait.until`. Never throws. */
  async handle(call: ConfirmCall, wait: WaitOptions): Promise<CallToolResult> {
    const key = this.store.keyOf(call.caller.id, call.fingerprint);
    let replace: string | undefined;
    try {
      for (let attempt = 0; attempt <= MAX_RESTARTS; attempt++) {
        const { record, created } = await this.store.open(key, {
          callId: `mcp-${randomBytes(12).toString('hex')}`,
          runId: call.runId,
          definitionHash: call.definitionHash,
          ttlMs: OPEN_TTL_MS,
          replace,
        });
        this.where(call, record).debug({ created, state: record.state }, 'confirm-tier call opened');
        if (record.result && isSettled(record.state)) {
          this.where(call, record).info({ state: record.state }, 'identical call answered with its outcome');
          return record.result;
        }
        const step = await this.follow(record, call, wait);
        if (step.kind === 'result') return step.result;
        replace = step.replace;
      }
      return errorResult(
        `Tool "${call.tool.name}" could not be asked about: its definition or its approval kept changing. It did not run.`,
      );
    } catch (error) {
      this.logger.error(
        { tool: call.tool.name, requester: call.caller.id, err: (error as Error).message },
        'confirm-tier call failed',
      );
      return this.unavailable(call, error);
    }
  }

  /** Follows the record's approval until it is decided (then settles or runs it) or the wait ends. */
  private async follow(record: CallRecord, call: ConfirmCall, wait: WaitOptions): Promise<Step> {
    let view: ExternalApprovalView;
    try {
      view = record.approvalId
        ? await this.client.get(record.approvalId, this.requester(call))
        : await this.submit(record, call);
    } catch (error) {
      // The approval aged out of the approval service while the record waited: ask again.
      if (error instanceof CountersignApiError && error.status === 404)
        return { kind: 'restart', replace: record.callId };
      return { kind: 'result', result: this.unavailable(call, error) };
    }
    const started = Date.now();
    for (;;) {
      if (view.status === 'deny') return this.settleRefused(record, call, refusedResult(view));
      if (view.status === 'respond')
        return this.settleRefused(record, call, respondedResult(call.tool.name, view));
      if (view.status === 'allow') return this.runApproved(record, view, call, wait);
      const left = wait.until - Date.now();
      if (left <= 0 || wait.signal.aborted) {
        this.where(call, record).info({ approvalId: view.approvalId }, 'call waits for approval');
        return { kind: 'result', result: pendingResult(call.tool.name, view) };
      }
      wait.onWaiting?.(view, Date.now() - started);
      try {
        view = await this.client.get(view.approvalId, {
          waitMs: Math.min(left, wait.pollEveryMs),
          signal: wait.signal,
          ...this.requester(call),
        });
      } catch (error) {
        if (wait.signal.aborted) return { kind: 'result', result: pendingResult(call.tool.name, view) };
        return { kind: 'result', result: this.unavailable(call, error) };
      }
    }
  }

  private async submit(record: CallRecord, call: ConfirmCall): Promise<ExternalApprovalView> {
    const { caller, tool } = call;
    const view = await this.client.submit({
      runId: record.runId,
      callId: record.callId,
      toolName: tool.name,
      args: call.args,
      ...this.requester(call),
      context: {
        runDescription: `MCP call by ${caller.name} (${caller.id}) through Countersign's MCP gateway${
          call.client ? `, from ${call.client}` : ''
        }`.slice(0, 2_000),
        toolDescription: tool.provided.definition.description.slice(0, 2_000),
      },
    });
    // The approval must be for exactly this call; anything else is never run.
    if (view.fingerprint !== call.fingerprint)
      throw new Error(`approval ${view.approvalId} is for another fingerprint than this call's`);
    const ttlMs = Math.max(0, Date.parse(view.expiresAt) - Date.now()) + this.resultTtlMs;
    await this.store.recordApproval(record, view, ttlMs);
    this.where(call, record).info(
      { approvalId: view.approvalId, expiresAt: view.expiresAt },
      'approval requested',
    );
    return view;
  }

  /** Approved: claims it (once, anywhere) and runs it, unless the tool changed, or another request has it. */
  private async runApproved(
    record: CallRecord,
    view: ExternalApprovalView,
    call: ConfirmCall,
    wait: WaitOptions,
  ): Promise<Step> {
    if (wait.signal.aborted) return { kind: 'result', result: pendingResult(call.tool.name, view) };
    // A server may have changed the tool without saying so: what was approved must be what runs.
    await this.catalog.refresh(call.tool.name);
    const now = this.catalog.registeredTool(call.tool.name);
    const tool = this.catalog.tool(call.tool.name);
    if (!now || !tool)
      return {
        kind: 'result',
        result: errorResult(
          `Tool "${call.tool.name}" is no longer offered by its server; the approved call did not run.`,
        ),
      };
    if (now.definitionHash !== record.definitionHash) {
      this.where(call, record).warn(
        { approvalId: view.approvalId },
        'tool changed since approval: asked again',
      );
      call.definitionHash = now.definitionHash;
      return { kind: 'restart' };
    }
    // The execution token: only this request may settle the run it starts (the call ledger's complete).
    const token = randomUUID();
    const timeoutMs = tool.server.timeoutOf(tool.provided.remoteName);
    const start = await this.store.startRun(record, token, timeoutMs + HEARTBEAT_MARGIN_MS);
    if (!start.started) {
      if (start.state === 'gone' || start.state === CallState.Pending) return { kind: 'restart' };
      return { kind: 'result', result: await this.outcomeOf(record, call, view, wait) };
    }
    if (view.claim) {
      // Claimed by a request whose gateway stopped before it recorded the outcome: it may have run. Never again.
      return this.settleDone(record, call, view, token, unknownOutcomeResult(call.tool.name, view));
    }
    const claim = await this.client.claim(view.approvalId, call.fingerprint, this.requester(call));
    if (claim.status === 'refused') {
      this.where(call, record).warn({ approvalId: view.approvalId, reason: claim.reason }, 'claim refused');
      if (claim.reason === 'already_claimed')
        return this.settleDone(record, call, view, token, unknownOutcomeResult(call.tool.name, view));
      if (claim.reason === 'denied' || claim.reason === 'expired')
        return this.settleRefused(
          record,
          call,
          refusedResult({ ...view, decidedBy: claim.reason === 'expired' ? 'expired' : view.decidedBy }),
          token,
        );
      return {
        kind: 'result',
        result: errorResult(
          `The approved call of "${call.tool.name}" could not be claimed (${claim.message}); it did not run.`,
        ),
      };
    }
    // Exactly the approved arguments (the same as the call's, by fingerprint).
    const result = await this.run(tool, claim.claim.args, record, call, wait);
    await this.settleDone(record, call, view, token, result);
    const text = result.isError ? firstText(result) : undefined;
    await this.client
      .complete(
        view.approvalId,
        { outcome: result.isError ? 'error' : 'ok', summary: text ? text.slice(0, 500) : undefined },
        this.requester(call),
      )
      .catch((error: Error) =>
        this.where(call, record).warn(
          { approvalId: view.approvalId, err: error.message },
          'completion not reported',
        ),
      );
    return { kind: 'result', result };
  }

  private async run(
    tool: GatewayTool,
    args: Record<string, unknown>,
    record: CallRecord,
    call: ConfirmCall,
    wait: WaitOptions,
  ): Promise<CallToolResult> {
    const where = this.where(call, record);
    try {
      const result = await this.relay.relay(tool, args, {
        signal: wait.signal,
        meta: call.meta,
        ids: { runId: record.runId, callId: record.callId, userId: call.caller.id, agent: this.self.id },
        onprogress: wait.onprogress,
      });
      where.info({ isError: result.isError === true }, 'approved call ran');
      // Counted once more, as in the worker: pending_confirmation when asked, executed when it ran.
      this.metrics.toolCalls.inc({ outcome: 'executed' });
      // The admission after-hooks before the result is stored: identical calls get it as they left it.
      return await this.catalog.afterTool(
        { callId: record.callId, toolName: tool.name, args, tier: 'confirm' },
        { runId: record.runId, agent: this.self.id, userId: call.caller.id, scopes: [] },
        result,
      );
    } catch (error) {
      const message = error instanceof ProviderCallError ? error.message : (error as Error).message;
      where.warn({ err: message }, 'approved call failed');
      return errorResult(message);
    }
  }

  /** Another request runs it: its outcome, once stored, or (the wait ended first) a note to call again. */
  private async outcomeOf(
    record: CallRecord,
    call: ConfirmCall,
    view: ExternalApprovalView,
    wait: WaitOptions,
  ): Promise<CallToolResult> {
    for (;;) {
      const now = await this.store.get(record.key);
      if (now?.result && isSettled(now.state)) return now.result;
      if (!now || now.callId !== record.callId || wait.signal.aborted || Date.now() >= wait.until)
        return errorResult(
          `Tool "${call.tool.name}" was approved and is running for an identical call. Call it again with exactly the ` +
            'same arguments to get its result; it runs once.',
          {
            'countersign/approval': {
              approvalId: view.approvalId,
              status: 'running',
              inboxUrl: view.inboxUrl,
            },
          },
        );
      await new Promise((resolve) => setTimeout(resolve, OUTCOME_POLL_MS));
    }
  }

  private async settleDone(
    record: CallRecord,
    call: ConfirmCall,
    view: ExternalApprovalView,
    token: string,
    result: CallToolResult,
  ): Promise<Step> {
    const stored = await this.store.complete(record, token, {
      state: CallState.Done,
      result: keptResult(result),
      ttlMs: this.resultTtlMs,
    });
    if (!stored.settled)
      this.where(call, record).error(
        { approvalId: view.approvalId, found: stored.found },
        'outcome of a run not stored',
      );
    return { kind: 'result', result };
  }

  private async settleRefused(
    record: CallRecord,
    call: ConfirmCall,
    result: CallToolResult,
    token?: string,
  ): Promise<Step> {
    const ttlMs = this.resultTtlMs;
    // Claimed by this request: the approval no longer held. Not claimed: the decision refused it.
    await (token
      ? this.store.complete(record, token, { state: CallState.Refused, result, ttlMs })
      : this.store.refuse(record, { result, ttlMs }));
    this.where(call, record).info({ approvalId: record.approvalId }, 'call refused');
    return { kind: 'result', result };
  }

  private unavailable(call: ConfirmCall, error: unknown): CallToolResult {
    return errorResult(
      `Countersign could not decide whether tool "${call.tool.name}" may run (${(error as Error).message}); it did not ` +
        'run. Try again later.',
    );
  }

  /** Whom the approval is for (the approvals API finds an approval only for the requester it was submitted for). */
  private requester(call: ConfirmCall): { onBehalfOf?: string } {
    return { onBehalfOf: call.caller.id === this.self.id ? undefined : call.caller.id };
  }

  private where(call: ConfirmCall, record: CallRecord): Logger {
    return this.logger.child({
      runId: record.runId,
      callId: record.callId,
      tool: call.tool.name,
      requester: call.caller.id,
    });
  }
}

function firstText(result: CallToolResult): string | undefined {
  const block = result.content.find((c) => c.type === 'text');
  return block?.type === 'text' ? block.text : undefined;
}
