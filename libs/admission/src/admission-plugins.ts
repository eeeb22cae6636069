// Admission hooks as the pipeline's callbacks (libs/authorization's ToolPlugin), one plugin per hook, in the config's
// order, so they run where the pipeline runs callbacks: RBAC → before-hooks → confirmation → tool → after-hooks.
import {
  type AfterToolContext,
  type BeforeToolContext,
  type BeforeToolVerdict,
  fingerprint,
  type ToolPlugin,
} from '@countersign/authorization';
import { matchesAny } from '@countersign/tool-providers';
import {
  type AdmissionConfig,
  AfterToolAnswerSchema,
  type BeforeToolAnswer,
  BeforeToolAnswerSchema,
} from './admission-config.schema';
import { callHook, type HookReply, type ResolvedHook, resolveHooks } from './hook-client';

export type HookStage = 'before_tool' | 'after_tool' | 'confirmation';

/** One hook's answer or failure about one call: what the service audits and measures. */
export interface HookEvent {
  hook: string;
  stage: HookStage;
  runId: string;
  callId: string;
  toolName: string;
  /** The answer's action, or `failed`. */
  outcome: string;
  /** The answer as parsed (absent on failure). */
  answer?: unknown;
  /** Why the hook failed. */
  reason?: string;
  /** Wall time of the request, in milliseconds. */
  ms: number;
}

export interface AdmissionOptions {
  /** A secret by its environment variable's name; undefined when unset. */
  secretOf: (variable: string) => string | undefined;
  /** Names the config section in start-up errors, e.g. `AGENTS_CONFIG: agents.ops.admission`. */
  where: string;
  /** Runbook runs: which runbook and step a call comes from. */
  describeStep?: (callId: string) => string | undefined;
  /** Every answer and failure; must not throw (it is awaited before the call goes on). */
  observe: (event: HookEvent) => Promise<void> | void;
}

/** The payload of a before-hook; an after-hook's adds `result`. */
export interface HookCall {
  hook: string;
  stage: HookStage;
  tool: string;
  arguments: unknown;
  fingerprint: string;
  principal: string;
  agent: string;
  runId: string;
  callId: string;
  tier: string;
  runbookStep?: string;
  result?: unknown;
}

/** The config's hooks as pipeline plugins; throws when a hook's secret is not set. */
export function admissionPlugins(
  config: AdmissionConfig | undefined,
  options: AdmissionOptions,
): ToolPlugin[] {
  if (!config) return [];
  const before = resolveHooks(config.beforeTool, options.secretOf, `${options.where}.beforeTool`);
  const after = resolveHooks(config.afterTool, options.secretOf, `${options.where}.afterTool`);
  return [
    ...before.map((hook) => beforePlugin(hook, options)),
    ...after.map((hook) => afterPlugin(hook, options)),
  ];
}

function beforePlugin(hook: ResolvedHook, options: AdmissionOptions): ToolPlugin {
  return {
    name: hook.name,
    async beforeTool(ctx: BeforeToolContext): Promise<BeforeToolVerdict | void> {
      if (!matchesAny(ctx.toolName, hook.tools)) return;
      const reply = await askBeforeHook(hook, ctx, options);
      // Fail closed: the pipeline refuses a call whose callback throws, and tells the model why.
      if (!reply.ok) throw new Error(`admission hook ${reply.reason}`);
      return reply.answer;
    },
  };
}

/**
 * Asks one before-hook about a call (the caller checked that the hook's globs match it) and reports the answer or
 * failure to `observe` before returning it: the worker's and gateway's plugins and the approvals API ask through this.
 */
export async function askBeforeHook(
  hook: ResolvedHook,
  ctx: BeforeToolContext,
  options: Pick<AdmissionOptions, 'describeStep' | 'observe'>,
): Promise<HookReply<BeforeToolAnswer>> {
  const reply = await callHook(hook, payload(hook, 'before_tool', ctx, options), BeforeToolAnswerSchema);
  await options.observe(eventOf(hook, 'before_tool', ctx, reply));
  return reply;
}

/** Characters of a skip's content kept in the audit entry (the model gets all of it). */
const AUDITED_CONTENT = 1_000;

/** The audit entry of a hook's answer (`admission.answered`) or failure (`admission.failed`), in the hook's name. */
export function admissionAuditEntry(event: HookEvent): {
  type: 'admission.answered' | 'admission.failed';
  runId: string;
  callId: string;
  actor: string;
  detail: Record<string, unknown>;
} {
  return {
    type: event.outcome === 'failed' ? 'admission.failed' : 'admission.answered',
    runId: event.runId,
    callId: event.callId,
    actor: `hook:${event.hook}`,
    detail: {
      hook: event.hook,
      stage: event.stage,
      toolName: event.toolName,
      outcome: event.outcome,
      ms: event.ms,
      ...(event.reason ? { reason: event.reason } : {}),
      ...(event.answer ? { answer: audited(event.answer) } : {}),
    },
  };
}

/** The answer as audited: a replaced result is left out (it may be what was redacted), a skip's content shortened. */
function audited(answer: unknown): unknown {
  const { result: _result, content, ...rest } = answer as { result?: unknown; content?: unknown };
  if (typeof content === 'string') return { ...rest, content: content.slice(0, AUDITED_CONTENT) };
  return rest;
}

function afterPlugin(hook: ResolvedHook, options: AdmissionOptions): ToolPlugin {
  return {
    name: hook.name,
    async afterTool(ctx: AfterToolContext): Promise<{ result: unknown } | void> {
      if (!matchesAny(ctx.toolName, hook.tools)) return;
      const call = { ...payload(hook, 'after_tool', ctx, options), result: ctx.result };
      const reply = await callHook(hook, call, AfterToolAnswerSchema);
      await options.observe(eventOf(hook, 'after_tool', ctx, reply));
      // The tool already ran: a failed after-hook leaves its own result (the pipeline keeps it on a throw too).
      if (reply.ok && reply.answer.action === 'replace') return { result: reply.answer.result };
    },
  };
}

function payload(
  hook: ResolvedHook,
  stage: HookStage,
  ctx: BeforeToolContext,
  options: Pick<AdmissionOptions, 'describeStep'>,
): HookCall {
  const step = options.describeStep?.(ctx.callId);
  let print = '';
  try {
    print = fingerprint(ctx.toolName, ctx.args);
  } catch {
    // Arguments without a JSON form: the hook gets no fingerprint (the pipeline refuses such a call before people).
  }
  return {
    hook: hook.name,
    stage,
    tool: ctx.toolName,
    arguments: ctx.args,
    fingerprint: print,
    principal: ctx.userId,
    agent: ctx.agent,
    runId: ctx.runId,
    callId: ctx.callId,
    tier: ctx.tier,
    ...(step ? { runbookStep: step } : {}),
  };
}

function eventOf(
  hook: ResolvedHook,
  stage: HookStage,
  ctx: BeforeToolContext,
  reply: Awaited<ReturnType<typeof callHook<{ action: string }>>>,
): HookEvent {
  const base = {
    hook: hook.name,
    stage,
    runId: ctx.runId,
    callId: ctx.callId,
    toolName: ctx.toolName,
    ms: reply.ms,
  };
  return reply.ok
    ? { ...base, outcome: reply.answer.action, answer: reply.answer }
    : { ...base, outcome: 'failed', reason: reply.reason };
}
