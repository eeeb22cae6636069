// Routing: which groups must decide a request, over which channels, with what quorum and deadline.
// Pure: the first rule whose every condition matches wins; no rule → the default group; none → no route.
import type { ApprovalRequest, Tier } from '@countersign/contracts';
import type { ApprovalsConfig, Channel, Rule, RuleMatch } from '../../config/approvals-config.schema';
import { globsMayOverlap, isLiteralGlob, matchesGlob } from './glob';

export interface Route {
  rule: string;
  /** Why the rule matched, in words for approvers: `args.service "payments" matches "payments*"`. */
  why: string;
  groups: string[];
  channels: Channel[];
  quorum: number;
  expiresInMs: number;
  escalation?: { afterMs: number; groups: string[] };
}

export interface RoutingDefaults {
  expiresInMs: number;
}

const ALL_CHANNELS: Channel[] = ['slack', 'email', 'web'];

/**
 * Returns the route, or undefined when nobody is configured to decide (the caller denies "no approver route"). A
 * request an admission hook sent to people goes to the groups the hook named (instead of the rule's), with the higher
 * of the two quorums; a group the config does not know routes it nowhere.
 */
export function routeRequest(
  request: ApprovalRequest,
  config: ApprovalsConfig,
  fallback: RoutingDefaults,
): Route | undefined {
  const route = ruleRoute(request, config, fallback);
  if (request.policy) return withPolicy(route, request.policy, config, fallback);
  return request.admission ? withAdmission(route, request.admission, config, fallback) : route;
}

/**
 * A request a Cedar policy sent to people goes to the groups its annotations named (the rule's when it named none),
 * with the higher of the two quorums; the policy is the route's name and its condition the reason approvers read.
 */
function withPolicy(
  route: Route | undefined,
  policy: NonNullable<ApprovalRequest['policy']>,
  config: ApprovalsConfig,
  fallback: RoutingDefaults,
): Route | undefined {
  const { id, condition, groups, quorum } = policy;
  if (groups?.some((g) => !config.groups.some((group) => group.id === g))) return undefined;
  const base =
    route ?? (groups ? toRoute({ groups, match: {} }, config, fallback, 'defaults', '') : undefined);
  if (!base) return undefined;
  return {
    ...base,
    rule: `policy ${id}`,
    // Shown as "policy payments-quorum: resource.args.amount > 1000" (the route's name, then why).
    why: groups ? condition : `${condition}; people from ${base.rule}: ${base.why}`,
    groups: groups ?? base.groups,
    quorum: Math.max(base.quorum, quorum ?? 1),
  };
}

function withAdmission(
  route: Route | undefined,
  admission: NonNullable<ApprovalRequest['admission']>,
  config: ApprovalsConfig,
  fallback: RoutingDefaults,
): Route | undefined {
  const { hook, groups, quorum } = admission;
  if (groups?.some((id) => !config.groups.some((group) => group.id === id))) return undefined;
  const base =
    route ??
    (groups ? toRoute({ groups, match: {} }, config, fallback, 'defaults', 'no rule matched') : undefined);
  if (!base) return undefined;
  const named = [
    groups ? `groups ${groups.join(', ')}` : undefined,
    quorum ? `quorum ${quorum}` : undefined,
  ].filter(Boolean);
  return {
    ...base,
    rule: `${base.rule} + admission hook ${hook}`,
    why: `${base.why}; admission hook ${hook} asked for people${named.length > 0 ? ` (${named.join(', ')})` : ''}`,
    groups: groups ?? base.groups,
    quorum: Math.max(base.quorum, quorum ?? 1),
  };
}

function ruleRoute(
  request: ApprovalRequest,
  config: ApprovalsConfig,
  fallback: RoutingDefaults,
): Route | undefined {
  const index = config.rules.findIndex((rule) => ruleMatches(rule.match, request));
  if (index >= 0) {
    const rule = config.rules[index];
    return toRoute(rule, config, fallback, rule.name ?? `rules[${index}]`, explainMatch(rule.match, request));
  }
  if (config.defaultGroup)
    return toRoute(
      { groups: [config.defaultGroup], match: {} },
      config,
      fallback,
      'defaultGroup',
      'no rule matched, so the default group decides',
    );
  return undefined;
}

/** The conditions of a matching rule, each with the request's value, joined with "and". */
export function explainMatch(match: RuleMatch, request: ApprovalRequest): string {
  const globs = (g: string | readonly string[]) =>
    (typeof g === 'string' ? [g] : g).map((x) => JSON.stringify(x)).join(' or ');
  const parts: string[] = [];
  if (match.tool !== undefined) parts.push(`tool ${request.toolName} matches ${globs(match.tool)}`);
  if (match.tier !== undefined) parts.push(`tier is ${request.tier}`);
  if (match.agent !== undefined) parts.push(`agent ${request.agent} matches ${globs(match.agent)}`);
  if (match.requester !== undefined)
    parts.push(`requester ${request.requester} matches ${globs(match.requester)}`);
  for (const [path, g] of Object.entries(match.args ?? {}))
    parts.push(`args.${path} ${JSON.stringify(argumentText(request.args, path))} matches ${globs(g)}`);
  return parts.length > 0 ? parts.join(' and ') : 'the rule matches every request';
}

export function ruleMatches(match: RuleMatch, request: ApprovalRequest): boolean {
  if (match.tool !== undefined && !matchesGlob(request.toolName, match.tool)) return false;
  if (match.agent !== undefined && !matchesGlob(request.agent, match.agent)) return false;
  if (match.requester !== undefined && !matchesGlob(request.requester, match.requester)) return false;
  if (
    match.tier !== undefined &&
    !(typeof match.tier === 'string' ? [match.tier] : match.tier).includes(request.tier)
  ) {
    return false;
  }
  return argumentsMatch(match.args ?? {}, request.args);
}

/** Every dotted argument path has a scalar value that matches its glob(s). */
export function argumentsMatch(
  patterns: Record<string, string | readonly string[]>,
  args: Record<string, unknown>,
): boolean {
  for (const [path, globs] of Object.entries(patterns)) {
    const value = argumentText(args, path);
    if (value === undefined || !matchesGlob(value, globs)) return false;
  }
  return true;
}

/** The value at a dotted path as text; objects, arrays and missing values do not match a glob. */
function argumentText(args: Record<string, unknown>, path: string): string | undefined {
  let value: unknown = args;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function toRoute(
  rule: Pick<Rule, 'groups' | 'channels' | 'quorum' | 'expiresIn' | 'escalation' | 'match'>,
  config: ApprovalsConfig,
  fallback: RoutingDefaults,
  name: string,
  why: string,
): Route {
  const escalation = rule.escalation ?? config.defaults.escalation;
  return {
    rule: name,
    why,
    groups: rule.groups,
    channels: rule.channels ?? config.defaults.channels ?? ALL_CHANNELS,
    quorum: rule.quorum ?? config.defaults.quorum ?? 1,
    expiresInMs: rule.expiresIn ?? config.defaults.expiresIn ?? fallback.expiresInMs,
    escalation: escalation ? { afterMs: escalation.after, groups: escalation.groups } : undefined,
  };
}

/**
 * Calls known only in part, as a standing rule describes those it covers when it is written: one tool, tier and
 * requester, any agent, and arguments of which only `args` (path → globs their value matches) is known.
 */
export interface CallPattern {
  toolName: string;
  tier: Tier;
  requester: string;
  args: Record<string, string | readonly string[]>;
}

/**
 * Every route a call of the pattern could get, in the order routing tries them: each rule that may match one of the
 * calls, until one that certainly matches them all (later rules and the default group are then out of reach). A rule
 * may match when its tool, tier and requester conditions match the pattern's, and each of its argument conditions
 * may be met: always for a path the pattern leaves open, else when some glob of the pattern may overlap one of the
 * rule's (globsMayOverlap). It certainly matches when it has no agent condition and each argument condition is met by
 * every value the pattern allows (the pattern's globs there are literal values the rule's globs match). So the list
 * holds every route a covered call can really get, and maybe more: what is refused for it errs on the safe side.
 */
export function possibleRoutes(
  pattern: CallPattern,
  config: ApprovalsConfig,
  fallback: RoutingDefaults,
): Route[] {
  const routes: Route[] = [];
  for (const [index, rule] of config.rules.entries()) {
    const fit = patternFit(rule.match, pattern);
    if (fit === 'never') continue;
    routes.push(
      toRoute(rule, config, fallback, rule.name ?? `rules[${index}]`, 'a covered call may match it'),
    );
    if (fit === 'always') return routes;
  }
  if (config.defaultGroup)
    routes.push(
      toRoute(
        { groups: [config.defaultGroup], match: {} },
        config,
        fallback,
        'defaultGroup',
        'a covered call may match no rule',
      ),
    );
  return routes;
}

/** The argument paths the routing rules look at: what a call must pin down to route like another. */
export function routedArgumentPaths(config: ApprovalsConfig): string[] {
  return [...new Set(config.rules.flatMap((rule) => Object.keys(rule.match.args ?? {})))];
}

/** The scalar argument at a dotted path, as routing reads it (undefined: objects, arrays and missing values). */
export function routedArgument(args: Record<string, unknown>, path: string): string | undefined {
  return argumentText(args, path);
}

function patternFit(match: RuleMatch, pattern: CallPattern): 'never' | 'maybe' | 'always' {
  if (match.tool !== undefined && !matchesGlob(pattern.toolName, match.tool)) return 'never';
  if (match.requester !== undefined && !matchesGlob(pattern.requester, match.requester)) return 'never';
  if (
    match.tier !== undefined &&
    !(typeof match.tier === 'string' ? [match.tier] : match.tier).includes(pattern.tier)
  )
    return 'never';
  let always = match.agent === undefined;
  for (const [path, ruleGlobs] of Object.entries(match.args ?? {})) {
    const known = pattern.args[path];
    if (known === undefined) {
      always = false;
      continue;
    }
    const globs = asList(known);
    if (!globs.some((g) => asList(ruleGlobs).some((r) => globsMayOverlap(g, r)))) return 'never';
    if (!globs.every((g) => isLiteralGlob(g) && matchesGlob(g, ruleGlobs))) always = false;
  }
  return always ? 'always' : 'maybe';
}

const asList = (globs: string | readonly string[]): readonly string[] =>
  typeof globs === 'string' ? [globs] : globs;
