// Every tool call goes through here: registry → RBAC → arguments → before-callbacks → tier/confirmation →
// execute → after-callbacks. The worker runs each model turn through `evaluateTurn`, so the turn's rules live here.
import { MAX_TOOL_ARGS_BYTES, type Tier } from '@countersign/contracts';
import type { AccessControl } from './access-control';
import {
  type CallPolicy,
  type CallPolicyInput,
  type CallPolicyVerdict,
  decideClosed,
  disagree,
  type ShadowPolicy,
  summarize,
} from './call-policy';
import { mapWithConcurrency } from './concurrency';
import {
  type ConfirmationHandler,
  type ConfirmationRequest,
  consultHandler,
  type PolicyDecision,
  DEFAULT_CONFIRMATION_TIMEOUT_MS,
} from './confirmation-handler';
import { ConfirmationPolicy, stricter } from './confirmation-policy';
import { type DecisionBook, refusalMessage, responseMessage } from './decisions';
import { fingerprint, printableReadableForm } from './fingerprint';
import { evaluatePrecondition, preconditionFailedMessage } from './precondition';
import type { AfterToolContext, BeforeToolContext, ConfirmationRoute, ToolPlugin } from './plugins';
import type { CallerContext, ToolCall } from './tool';
import type { ToolCallOutcome } from './tool-call-outcome';
import type { RegisteredTool, ToolRegistry } from './tool-registry';

export interface PipelineOptions {
  registry: ToolRegistry;
  /** Omit only where every registered tool is open to every user. */
  accessControl?: AccessControl;
  /**
   * Asked in RBAC's place (after the arguments passed the tool's schema, since a policy may read them): may the call
   * run, at which tier (never lower than the declared one), for which people. `accessControl` is then not asked.
   * @defaultValue none: RBAC and the tiers decide
   */
  callPolicy?: CallPolicy;
  /** Evaluated beside the active rules on every call; disagreements are reported, nothing is decided by it. */
  shadowPolicy?: ShadowPolicy;
  /** @defaultValue a policy that adds nothing to the tools' declared tiers */
  policy?: ConfirmationPolicy;
  confirmationHandler?: ConfirmationHandler;
  /** @defaultValue 5000 */
  confirmationTimeoutMs?: number;
  /** Run in order for every call. @defaultValue [] */
  plugins?: readonly ToolPlugin[];
  /** Calls of one turn run at most this many at a time. @defaultValue 4 */
  maxConcurrentTools?: number;
}

export interface EvaluateContext extends CallerContext {
  /** Decisions known for this run, keyed by call ID. */
  decisions?: DecisionBook;
}

/** A call that passed every check and may execute now. */
export interface ReadyCall {
  kind: 'ready';
  callId: string;
  toolName: string;
  tool: RegisteredTool;
  args: unknown;
  tier: Tier;
  approvedBy: 'auto' | 'person' | 'policy';
  /** Set when a confirmation handler approved it: which one (and rule). */
  policyDecision?: PolicyDecision;
}

export type RefusedOrWaiting = Exclude<ToolCallOutcome, { kind: 'executed' }>;
export type Authorization = ReadyCall | RefusedOrWaiting;

/** Options of one `evaluateTurn`. */
export interface TurnOptions {
  /**
   * Awaited once after every call of the turn is authorized and before the first one executes, and only when
   * some call may execute. Throwing fails the turn: nothing executes and `evaluateTurn` rejects with that error
   * (the worker checks here that it still owns the run, so a processing that lost it never runs auto calls twice).
   * @defaultValue none
   */
  beforeExecute?: (ready: readonly ReadyCall[]) => Promise<void> | void;
  /**
   * Awaited for each call as soon as its outcome is known: a refused or waiting call once the turn is authorized, a
   * ready one when it finished executing (so a fast call's result is not held back by a slow one). `index` is the
   * call's position in the turn. `evaluateTurn` resolves once every call's callback has. A ready call's slot
   * (`maxConcurrentTools`) is free again when the call ends, while its callback may still run. Throwing rejects the
   * turn: no call starts after that is known (calls already executing still finish, and are told).
   * @defaultValue none
   */
  onOutcome?: (outcome: ToolCallOutcome, index: number) => Promise<void> | void;
}

export const DEFAULT_MAX_CONCURRENT_TOOLS = 4;

export class ToolCallPipeline {
  private readonly policy: ConfirmationPolicy;
  private readonly plugins: readonly ToolPlugin[];
  readonly maxConcurrentTools: number;

  constructor(private readonly options: PipelineOptions) {
    this.policy = options.policy ?? new ConfirmationPolicy();
    this.plugins = options.plugins ?? [];
    this.maxConcurrentTools = options.maxConcurrentTools ?? DEFAULT_MAX_CONCURRENT_TOOLS;
  }

  get registry(): ToolRegistry {
    return this.options.registry;
  }

  /** The whole pipeline for one call. Never throws. */
  async evaluate(call: ToolCall, ctx: EvaluateContext): Promise<ToolCallOutcome> {
    const authorization = await this.withPrecondition(await this.authorize(call, ctx), ctx);
    return authorization.kind === 'ready' ? this.execute(authorization, ctx) : authorization;
  }

  /**
   * Every call of one model turn: all are authorized first, then the ready ones execute, each step at most
   * `maxConcurrentTools` calls at a time; outcomes keep the call order. Nothing of the turn executes when it
   * repeats a call ID or when a before-callback aborts the run. Rejects only when `beforeExecute` or `onOutcome`
   * throws.
   */
  async evaluateTurn(
    calls: readonly ToolCall[],
    ctx: EvaluateContext,
    options: TurnOptions = {},
  ): Promise<ToolCallOutcome[]> {
    const told = async (outcome: ToolCallOutcome, index: number): Promise<ToolCallOutcome> => {
      if (options.onOutcome) await options.onOutcome(outcome, index);
      return outcome;
    };
    const repeated = repeatedCallIds(calls);
    if (repeated.length > 0)
      return Promise.all(calls.map((call, i) => told(repeatedIdOutcome(call, repeated), i)));
    const authorized = await this.authorizeTurn(calls, ctx);
    const ready = authorized.filter((a): a is ReadyCall => a.kind === 'ready');
    if (ready.length === 0) return Promise.all(authorized.map((a) => a as RefusedOrWaiting).map(told));
    if (options.beforeExecute) await options.beforeExecute(ready);
    // Refusals are told at once; ready calls run `maxConcurrentTools` at a time, each told as soon as it finished. A
    // call's slot is free when the call ends, not when its telling does (the worker's audit entry: a Redis trip), but
    // once a telling failed no further call starts.
    const tellings: Promise<ToolCallOutcome>[] = [];
    let failure: { error: unknown } | undefined;
    const tell = (outcome: ToolCallOutcome, index: number): ToolCallOutcome => {
      const telling = told(outcome, index);
      telling.catch((error: unknown) => (failure ??= { error }));
      tellings.push(telling);
      return outcome;
    };
    const outcomes = authorized.map((a, i) => (a.kind === 'ready' ? undefined : tell(a, i)));
    const positions = authorized.flatMap((a, i) => (a.kind === 'ready' ? [i] : []));
    try {
      const executed = await mapWithConcurrency(positions, this.maxConcurrentTools, async (i) => {
        if (failure) throw failure.error;
        return tell(await this.execute(authorized[i] as ReadyCall, ctx), i);
      });
      positions.forEach((position, k) => (outcomes[position] = executed[k]));
    } finally {
      await Promise.all(tellings);
    }
    return outcomes as ToolCallOutcome[];
  }

  /** Authorizes a turn's calls; once one aborts, the turn is aborted and nothing of it may run. */
  private async authorizeTurn(calls: readonly ToolCall[], ctx: EvaluateContext): Promise<Authorization[]> {
    const turn: { abortedBy?: { plugin: string; reason: string } } = {};
    const authorized = await mapWithConcurrency(calls, this.maxConcurrentTools, async (call) => {
      // Calls not started yet are not even authorized: their callbacks and handlers are not consulted.
      if (turn.abortedBy)
        return abortedOutcome(call.id, call.name, turn.abortedBy.plugin, turn.abortedBy.reason);
      const authorization = await this.withPrecondition(await this.authorize(call, ctx), ctx);
      if (authorization.kind === 'aborted') turn.abortedBy ??= authorization;
      return authorization;
    });
    const abortedBy = turn.abortedBy;
    if (!abortedBy) return authorized;
    // An aborted run does nothing more: no call of its turn runs, waits for a person or asks for a manual
    // step, whichever call came first. Refusals stay as they were: they tell the truth about their call.
    return authorized.map((a) =>
      a.kind === 'ready' || a.kind === 'pending_confirmation' || a.kind === 'manual_required'
        ? abortedOutcome(a.callId, a.toolName, abortedBy.plugin, abortedBy.reason)
        : a,
    );
  }

  /**
   * Every check up to (not including) execution. The worker calls this on its own when it must claim
   * the call in Redis between deciding and running it.
   */
  async authorize(call: ToolCall, ctx: EvaluateContext): Promise<Authorization> {
    const tool = this.options.registry.get(call.name);
    if (!tool) {
      return errorOutcome(
        call,
        `Unknown tool "${call.name}": it is not registered for this agent, so nothing ran.`,
      );
    }

    const { callPolicy } = this.options;
    // RBAC before the arguments: a user without the permission learns nothing about the tool's schema. A call policy
    // reads the arguments, so it is asked after them.
    const access = callPolicy ? undefined : this.options.accessControl?.check(ctx.userId, call.name);
    if (access && !access.allowed) {
      this.compareShadow(call, tool, ctx, { allowed: false, reason: access.reason });
      return { kind: 'denied', by: 'rbac', callId: call.id, toolName: call.name, content: access.reason };
    }

    const parsed = parseArguments(call, tool);
    if (!parsed.ok) return parsed.outcome;
    const args = parsed.args;

    let declared = this.policy.effectiveTier(call.name, tool.tier);
    const input: CallPolicyInput = {
      principal: ctx.userId,
      agent: ctx.agent,
      toolName: call.name,
      args,
      tier: declared,
    };
    let policyRoute: ConfirmationRoute | undefined;
    if (callPolicy) {
      const verdict = decideClosed(callPolicy, input);
      this.compareShadow(call, tool, ctx, verdict, input);
      if (!verdict.allowed) {
        const content = `Tool "${call.name}" was refused: ${verdict.reason}. It did not run.`;
        return { kind: 'denied', by: 'rbac', callId: call.id, toolName: call.name, content };
      }
      declared = stricter(declared, verdict.tier);
      if (verdict.groups || verdict.quorum || declared !== 'auto')
        policyRoute = {
          by: verdict.policy ? `policy ${verdict.policy.id}` : callPolicy.name,
          ...(verdict.groups ? { groups: verdict.groups } : {}),
          ...(verdict.quorum ? { quorum: verdict.quorum } : {}),
          ...(verdict.policy ? { policy: verdict.policy } : {}),
        };
    } else {
      this.compareShadow(call, tool, ctx, { allowed: true, tier: declared }, input);
    }

    const guard = await this.runBeforeCallbacks(call, args, declared, ctx);
    if (guard.refused) return guard.refused;
    // A callback that asks people makes an auto call a confirm one; it never makes a call less strict. So does a
    // policy that names people. A callback's route (asked later, about this very call) takes the policy's place.
    const route = guard.route ?? policyRoute;
    const tier: Tier = route && declared === 'auto' ? 'confirm' : declared;

    if (tier === 'auto') return ready(call, tool, args, tier, 'auto');
    let print: string;
    try {
      print = fingerprint(call.name, args);
    } catch (error) {
      // e.g. a schema transform that yields a value JSON cannot carry: nothing can be approved, so nothing runs.
      return errorOutcome(
        call,
        `Arguments for tool "${call.name}" have no JSON form (${errorText(error)}). Nothing ran.`,
      );
    }
    // A call that waits for a person travels with its arguments (run state, approval request, what approvers
    // see); past the contracts' bound it could not be asked about, so the model hears why instead.
    const size = Buffer.byteLength(JSON.stringify(args));
    if (size > MAX_TOOL_ARGS_BYTES)
      return errorOutcome(
        call,
        `Arguments for tool "${call.name}" are ${size} bytes as JSON; at most ${MAX_TOOL_ARGS_BYTES} can be ` +
          'sent for approval. Nothing ran.',
      );
    if (tier === 'manual_only') {
      return {
        kind: 'manual_required',
        callId: call.id,
        toolName: call.name,
        args,
        fingerprint: print,
        definitionHash: tool.definitionHash,
        content:
          `Tool "${call.name}" must be done by a person: it is manual-only and was not executed. ` +
          'Approvers have been told that a manual step is due.',
      };
    }
    return this.confirm(call, tool, args, print, ctx, route);
  }

  /**
   * A call that waits for a person carries its tool's precondition as evaluated now (anything else is returned as it
   * is). Fails closed: a precondition that cannot be evaluated means the call is neither run nor sent for approval,
   * and the model is told why. Separate from `authorize`, which reads nothing through the tools (policy test, the
   * gateway): the turn (evaluateTurn, evaluate) applies it, and the worker when it asks about a call again.
   */
  async withPrecondition(authorization: Authorization, ctx: CallerContext): Promise<Authorization> {
    if (authorization.kind !== 'pending_confirmation') return authorization;
    const pending = authorization;
    const tool = this.options.registry.get(pending.toolName);
    if (!tool?.definition.precondition) return pending;
    const result = await evaluatePrecondition(
      tool.definition,
      pending.args,
      callContext(ctx, pending.callId),
    );
    if (!result) return pending;
    if (!result.ok)
      return errorOutcome(
        { id: pending.callId, name: pending.toolName, args: pending.args },
        preconditionFailedMessage(pending.toolName, result.error, 'asked'),
      );
    return { ...pending, precondition: { value: result.value, digest: result.digest } };
  }

  /** Runs an authorized call and its after-callbacks. Never throws. */
  async execute(readyCall: ReadyCall, ctx: CallerContext): Promise<ToolCallOutcome> {
    const { callId, toolName, tool, args } = readyCall;
    let result: unknown;
    try {
      result = await tool.definition.handler(args, callContext(ctx, callId));
    } catch (error) {
      return {
        kind: 'error',
        callId,
        toolName,
        message: errorText(error),
        content: `Tool "${toolName}" failed: ${errorText(error)}`,
      };
    }
    result = await this.afterCallbacks(readyCall, ctx, result);
    return {
      kind: 'executed',
      callId,
      toolName,
      result,
      content: toContent(result),
      approvedBy: readyCall.approvedBy,
      ...(readyCall.policyDecision ? { policyDecision: readyCall.policyDecision } : {}),
    };
  }

  /**
   * The after-callbacks of a call that ran, in order: each may replace the result. Never throws: the tool already
   * ran, so a failing after-callback leaves the result it was given. Services that run a call themselves (the MCP
   * gateway relays it) call this with its result.
   */
  async afterCallbacks(
    call: Pick<ReadyCall, 'callId' | 'toolName' | 'args' | 'tier'>,
    ctx: CallerContext,
    result: unknown,
  ): Promise<unknown> {
    for (const plugin of this.plugins) {
      if (!plugin.afterTool) continue;
      try {
        const replaced = await plugin.afterTool(afterContext(ctx, call, result));
        if (replaced && 'result' in replaced) result = replaced.result;
      } catch {
        // The tool already ran; a failing after-callback must not hide its result.
      }
    }
    return result;
  }

  private async confirm(
    call: ToolCall,
    tool: RegisteredTool,
    args: unknown,
    print: string,
    ctx: EvaluateContext,
    route?: ConfirmationRoute,
  ): Promise<Authorization> {
    const pending = (extra: object = {}): Authorization => ({
      kind: 'pending_confirmation',
      callId: call.id,
      toolName: call.name,
      args,
      tier: 'confirm',
      fingerprint: print,
      definitionHash: tool.definitionHash,
      content: `Tool "${call.name}" is waiting for approval.`,
      ...(route ? { route } : {}),
      ...extra,
    });

    const decision = ctx.decisions?.get(call.id);
    if (decision) {
      if (decision.fingerprint !== print) {
        return pending({
          mismatch: {
            expected: printableReadableForm(call.name, args),
            shown: decision.shown
              ? printableReadableForm(decision.shown.toolName, decision.shown.args)
              : undefined,
            decisionFingerprint: decision.fingerprint,
          },
        });
      }
      if (decision.decision === 'approve') return ready(call, tool, args, 'confirm', 'person');
      if (decision.decision === 'respond')
        return {
          kind: 'responded',
          callId: call.id,
          toolName: call.name,
          content: responseMessage(call.name, decision),
          approvers: decision.approvers ?? [],
          response: decision.response ?? '',
        };
      const by =
        decision.decidedBy === 'person' || decision.decidedBy === undefined ? 'person' : decision.decidedBy;
      return {
        kind: 'denied',
        by,
        callId: call.id,
        toolName: call.name,
        content: refusalMessage(decision),
        approvers: decision.approvers,
      };
    }

    // A callback (or a policy naming groups or a quorum) asked for people: no handler decides in their place. A
    // policy that only set the tier named nobody: its route just says which policy decided.
    const peopleAsked =
      route !== undefined && (!route.policy || route.groups !== undefined || route.quorum !== undefined);
    if (!this.options.confirmationHandler || peopleAsked) return pending();
    const verdict = await consultHandler(
      this.options.confirmationHandler,
      confirmationRequest(ctx, call, args, print),
      this.options.confirmationTimeoutMs ?? DEFAULT_CONFIRMATION_TIMEOUT_MS,
    );
    if (verdict.decision === 'approve') {
      const approved = ready(call, tool, args, 'confirm', 'policy');
      return verdict.decidedBy ? { ...approved, policyDecision: verdict.decidedBy } : approved;
    }
    if (verdict.decision === 'deny') {
      return {
        kind: 'denied',
        by: 'policy',
        callId: call.id,
        toolName: call.name,
        content: refusalMessage({ decidedBy: 'policy', reason: verdict.reason }),
        ...(verdict.decidedBy ? { policyDecision: verdict.decidedBy } : {}),
      };
    }
    return pending(verdict.fallback ? { handlerFallback: verdict.fallback } : {});
  }

  /**
   * The shadow policy's answer beside the active one (`active`), reported when they differ. Never throws and never
   * changes the call's outcome. A call refused by RBAC before its arguments were checked is compared with them
   * parsed here; arguments the schema refuses are not compared (nothing would run either way).
   */
  private compareShadow(
    call: ToolCall,
    tool: RegisteredTool,
    ctx: EvaluateContext,
    active: CallPolicyVerdict,
    known?: CallPolicyInput,
  ): void {
    const shadow = this.options.shadowPolicy;
    if (!shadow) return;
    try {
      let input = known;
      if (!input) {
        const parsed = parseArguments(call, tool);
        if (!parsed.ok) return;
        const tier = this.policy.effectiveTier(call.name, tool.tier);
        input = { principal: ctx.userId, agent: ctx.agent, toolName: call.name, args: parsed.args, tier };
      }
      let verdict: CallPolicyVerdict;
      try {
        verdict = shadow.policy.decide(input);
      } catch (error) {
        shadow.onError({ input, reason: errorText(error) });
        return;
      }
      const activeBy = this.options.callPolicy?.name ?? 'json rules';
      const a = summarize(active, activeBy);
      const s = summarize(verdict, shadow.policy.name);
      if (disagree(a, s)) shadow.onDisagreement({ input, active: a, shadow: s });
    } catch {
      // A shadow never affects the call, not even by failing to report.
    }
  }

  private async runBeforeCallbacks(
    call: ToolCall,
    args: unknown,
    tier: Tier,
    ctx: EvaluateContext,
  ): Promise<{ refused?: RefusedOrWaiting; route?: ConfirmationRoute }> {
    let route: ConfirmationRoute | undefined;
    for (const plugin of this.plugins) {
      if (!plugin.beforeTool) continue;
      let verdict;
      try {
        verdict = await plugin.beforeTool(toolContext(ctx, call.id, call.name, args, tier));
      } catch (error) {
        return refused({
          kind: 'denied',
          by: 'guard',
          callId: call.id,
          toolName: call.name,
          content: `Tool "${call.name}" was refused: guard "${plugin.name}" failed (${errorText(error)}), so it did not run.`,
        });
      }
      if (!verdict || verdict.action === 'allow') continue;
      if (verdict.action === 'confirm') {
        // The first callback that asks for people names them; later ones may still refuse the call.
        route ??= {
          by: plugin.name,
          ...(verdict.groups ? { groups: verdict.groups } : {}),
          ...(verdict.quorum ? { quorum: verdict.quorum } : {}),
        };
        continue;
      }
      if (verdict.action === 'skip') {
        return refused({
          kind: 'skipped',
          plugin: plugin.name,
          callId: call.id,
          toolName: call.name,
          content: verdict.content,
        });
      }
      if (verdict.action === 'abort')
        return refused(abortedOutcome(call.id, call.name, plugin.name, verdict.reason));
      const why =
        verdict.action === 'deny'
          ? `guard "${plugin.name}" denied it: ${verdict.reason}`
          : `guard "${plugin.name}" returned an unknown verdict`;
      return refused({
        kind: 'denied',
        by: 'guard',
        callId: call.id,
        toolName: call.name,
        content: `Tool "${call.name}" was refused: ${why}. It did not run.`,
      });
    }
    return route ? { route } : {};
  }
}

function refused(outcome: RefusedOrWaiting): { refused: RefusedOrWaiting } {
  return { refused: outcome };
}

function ready(
  call: ToolCall,
  tool: RegisteredTool,
  args: unknown,
  tier: Tier,
  approvedBy: ReadyCall['approvedBy'],
): ReadyCall {
  return { kind: 'ready', callId: call.id, toolName: call.name, tool, args, tier, approvedBy };
}

// The contexts below are built field by field, never by spreading `ctx`: only the caller's identity
// reaches handlers and callbacks (never the run's decisions), and object spread costs about 1 µs per
// call on Node 20, a fifth of the per-call budget (see bench/policy.bench.ts).

function callContext(ctx: CallerContext, callId: string): CallerContext & { callId: string } {
  return { runId: ctx.runId, agent: ctx.agent, userId: ctx.userId, scopes: ctx.scopes, callId };
}

function toolContext(
  ctx: CallerContext,
  callId: string,
  toolName: string,
  args: unknown,
  tier: Tier,
): BeforeToolContext {
  return {
    runId: ctx.runId,
    agent: ctx.agent,
    userId: ctx.userId,
    scopes: ctx.scopes,
    callId,
    toolName,
    args,
    tier,
  };
}

function afterContext(
  ctx: CallerContext,
  call: Pick<ReadyCall, 'callId' | 'toolName' | 'args' | 'tier'>,
  result: unknown,
): AfterToolContext {
  const after = toolContext(ctx, call.callId, call.toolName, call.args, call.tier) as AfterToolContext;
  after.result = result;
  return after;
}

function confirmationRequest(
  ctx: CallerContext,
  call: ToolCall,
  args: unknown,
  print: string,
): ConfirmationRequest {
  return {
    runId: ctx.runId,
    agent: ctx.agent,
    userId: ctx.userId,
    scopes: ctx.scopes,
    callId: call.id,
    toolName: call.name,
    args,
    fingerprint: print,
  };
}

/** Schema-checks the model's arguments. A schema that throws (e.g. in a refinement) is an error result too. */
function parseArguments(
  call: ToolCall,
  tool: RegisteredTool,
): { ok: true; args: unknown } | { ok: false; outcome: RefusedOrWaiting } {
  let parsed;
  try {
    parsed = tool.definition.args.safeParse(call.args);
  } catch (error) {
    const message = `Arguments for tool "${call.name}" could not be checked: ${errorText(error)}. Nothing ran.`;
    return { ok: false, outcome: errorOutcome(call, message) };
  }
  if (parsed.success) return { ok: true, args: parsed.data };
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  return {
    ok: false,
    outcome: errorOutcome(call, `Invalid arguments for tool "${call.name}": ${problems}. Nothing ran.`),
  };
}

/** Call IDs given to more than one call of the turn, in order of first use. */
function repeatedCallIds(calls: readonly ToolCall[]): string[] {
  if (calls.length < 2) return [];
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const call of calls) {
    if (seen.has(call.id)) repeated.add(call.id);
    seen.add(call.id);
  }
  return [...repeated];
}

/**
 * A decision authorizes one call by its ID, and a parked call is stored and asked about under it: two calls under
 * one ID cannot be told apart. Refusing the whole turn, not only the repeats, keeps the rule simple for the model
 * (nothing ran, send the turn again) and leaves no call of it half-done or waiting.
 */
function repeatedIdOutcome(call: ToolCall, repeated: readonly string[]): RefusedOrWaiting {
  const ids = repeated.map((id) => `"${id}"`).join(', ');
  const which = repeated.length === 1 ? `call ID ${ids} was` : `call IDs ${ids} were`;
  return errorOutcome(
    call,
    `Nothing in this turn ran: ${which} given to more than one tool call, and every call needs its own ID. ` +
      'Send the calls again, each with a unique ID.',
  );
}

function errorOutcome(call: ToolCall, message: string): RefusedOrWaiting {
  return { kind: 'error', callId: call.id, toolName: call.name, message, content: message };
}

function abortedOutcome(callId: string, toolName: string, plugin: string, reason: string): RefusedOrWaiting {
  return {
    kind: 'aborted',
    callId,
    toolName,
    plugin,
    reason,
    content: `Run aborted by "${plugin}": ${reason}`,
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What the model reads for a result: strings as they are, anything else as JSON. */
export function toContent(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === undefined) return '';
  try {
    return JSON.stringify(result);
  } catch {
    return String(result);
  }
}
