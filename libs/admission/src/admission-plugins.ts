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
  BeforeToolAnswerSchema,
} from './admission-config.schema';
import { callHook, type ResolvedHook, resolveHooks } from './hook-client';

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
      const reply = await callHook(hook, payload(hook, 'before_tool', ctx, options), BeforeToolAnswerSchema);
      const event = eventOf(hook, 'before_tool', ctx, reply);
      await options.observe(event);
      // Fail closed: the pipeline refuses a call whose callback throws, and tells the model why.
      if (!reply.ok) throw new Error(`admission hook ${reply.reason}`);
      return reply.answer;
    },
  };
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
  options: AdmissionOptions,
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
