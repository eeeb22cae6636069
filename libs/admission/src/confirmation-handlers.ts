// A configured confirmation handler as libs/authorization's ConfirmationHandler. The pipeline consults it (through
// consultHandler, which owns the rule that a throw, a timeout or nonsense means "ask a person") only for a confirm-tier
// call that no before-hook sent to people; a manual-only call never reaches it.
import type {
  ConfirmationHandler,
  ConfirmationRequest,
  HandlerVerdict,
  PolicyDecision,
} from '@countersign/authorization';
import { matchesAny } from '@countersign/tool-providers';
import type { HookEvent } from './admission-plugins';
import {
  ConfirmationAnswerSchema,
  type ConfirmationHandlerConfig,
  type HandlerRule,
} from './confirmation-handler.schema';
import { callHook, resolveHooks } from './hook-client';

export interface HandlerOptions {
  /** Names the config section in start-up errors, e.g. `AGENTS_CONFIG: agents.ops.confirmationHandler`. */
  where: string;
  /** A hook's secret by its environment variable's name; undefined when unset. */
  secretOf: (variable: string) => string | undefined;
  /** An environment variable of the service, for rules' `when.env` (read once, here). */
  envOf: (variable: string) => string | undefined;
  /** A hook handler's answers and failures (stage `confirmation`); must not throw. */
  observe?: (event: HookEvent) => Promise<void> | void;
}

export interface BuiltHandler {
  handler: ConfirmationHandler;
  /** The deadline the pipeline gives it (consultHandler's). */
  timeoutMs: number;
}

/** The pipeline's deadline for a rules handler: it answers at once, so a generous one is never reached. */
const RULES_TIMEOUT_MS = 1_000;

/** The handler of the config; throws when a hook handler's secret is not set. */
export function confirmationHandler(
  config: ConfirmationHandlerConfig,
  options: HandlerOptions,
): BuiltHandler {
  if (config.kind === 'rules')
    return { handler: rulesHandler(config, options.envOf), timeoutMs: RULES_TIMEOUT_MS };
  const [hook] = resolveHooks([config], options.secretOf, options.where);
  const decidedBy: PolicyDecision = { by: `handler:${config.name}` };
  const handler: ConfirmationHandler = async (request) => {
    if (!matchesAny(request.toolName, hook.tools)) return { decision: 'ask' };
    const reply = await callHook(hook, hookPayload(config.name, request), ConfirmationAnswerSchema);
    await options.observe?.({
      hook: config.name,
      stage: 'confirmation',
      runId: request.runId,
      callId: request.callId,
      toolName: request.toolName,
      ms: reply.ms,
      ...(reply.ok
        ? { outcome: reply.answer.decision, answer: reply.answer }
        : { outcome: 'failed', reason: reply.reason }),
    });
    // consultHandler turns the throw into "ask a person", with the reason.
    if (!reply.ok) throw new Error(`confirmation hook "${config.name}" ${reply.reason}`);
    return reply.answer.decision === 'ask' ? reply.answer : { ...reply.answer, decidedBy };
  };
  return { handler, timeoutMs: config.timeoutMs };
}

/** What a rules handler decides about one call: the first matching rule's decision, or ask. Pure. */
export function decideByRules(
  name: string,
  rules: readonly HandlerRule[],
  request: Pick<ConfirmationRequest, 'toolName' | 'args'>,
  envOf: (variable: string) => string | undefined,
): HandlerVerdict {
  const rule = rules.find((r) => ruleMatches(r, request, envOf));
  if (!rule) return { decision: 'ask' };
  const decidedBy: PolicyDecision = { by: `handler:${name}`, rule: rule.name };
  return rule.decision === 'approve'
    ? { decision: 'approve', decidedBy }
    : { decision: 'deny', reason: rule.reason ?? `rule "${rule.name}" of handler "${name}"`, decidedBy };
}

function rulesHandler(
  config: Extract<ConfirmationHandlerConfig, { kind: 'rules' }>,
  envOf: (variable: string) => string | undefined,
): ConfirmationHandler {
  // The environment is read once: a rule's `when.env` is part of the deployment, not of the call.
  const snapshot = new Map<string, string | undefined>();
  for (const rule of config.rules)
    for (const variable of Object.keys(rule.when.env ?? {})) snapshot.set(variable, envOf(variable));
  return (request) => decideByRules(config.name, config.rules, request, (v) => snapshot.get(v));
}

function ruleMatches(
  rule: HandlerRule,
  request: Pick<ConfirmationRequest, 'toolName' | 'args'>,
  envOf: (variable: string) => string | undefined,
): boolean {
  if (!matchesAny(request.toolName, rule.tools)) return false;
  for (const [variable, value] of Object.entries(rule.when.env ?? {}))
    if (envOf(variable) !== value) return false;
  for (const [path, value] of Object.entries(rule.when.args ?? {}))
    if (valueAt(request.args, path) !== value) return false;
  return true;
}

/** The scalar at a dotted path; objects, arrays and missing values are undefined (they equal no rule value). */
function valueAt(args: unknown, path: string): unknown {
  let value = args;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? value : undefined;
}

function hookPayload(handler: string, request: ConfirmationRequest) {
  return {
    hook: handler,
    stage: 'confirmation',
    tool: request.toolName,
    arguments: request.args,
    fingerprint: request.fingerprint,
    principal: request.userId,
    agent: request.agent,
    runId: request.runId,
    callId: request.callId,
    tier: 'confirm',
  };
}
