// A call policy answers, for one call, what the JSON rules answer with RBAC and tiers: may this principal call this
// tool with these arguments, at which tier, and which people must decide — and which policy said so. The pipeline
// asks it in RBAC's place when one is configured (Cedar, libs/policy), and asks a shadow one beside the active rules
// only to compare: a shadow never decides.
import type { Tier } from '@countersign/contracts';

/** What a policy is asked about a call (after its arguments passed the tool's schema). */
export interface CallPolicyInput {
  /** The principal the run acts for. */
  principal: string;
  agent: string;
  toolName: string;
  args: unknown;
  /** The tier the tool's declaration and the JSON tiers give: a policy may raise it, never lower it. */
  tier: Tier;
}

/** The policy that decided, as approvers and the audit read it: `policy payments-quorum: resource.args.amount > 1000`. */
export interface PolicyMention {
  id: string;
  /** Its condition as written (or its `@reason`). */
  condition: string;
}

export type CallPolicyVerdict =
  | { allowed: false; reason: string; policy?: PolicyMention }
  | { allowed: true; tier: Tier; groups?: string[]; quorum?: number; policy?: PolicyMention };

export interface CallPolicy {
  /** `cedar config/policies`, for logs and metrics. */
  readonly name: string;
  /** Never throws: an error is a refusal (fail closed). */
  decide(input: CallPolicyInput): CallPolicyVerdict;
}

/** A second policy evaluated beside the active rules on every call, to compare; it decides nothing. */
export interface ShadowPolicy {
  policy: CallPolicy;
  /** Told of each call on which the shadow's answer differs from the active one. Must not throw. */
  onDisagreement(disagreement: ShadowDisagreement): void;
  /** Told when the shadow failed to evaluate (its verdict is then not compared). Must not throw. */
  onError(error: { input: CallPolicyInput; reason: string }): void;
}

export interface ShadowDisagreement {
  input: CallPolicyInput;
  active: VerdictSummary;
  shadow: VerdictSummary;
}

/** A verdict reduced to what is compared: the outcome (denied or a tier), and the people it names. */
export interface VerdictSummary {
  outcome: 'denied' | Tier;
  groups?: string[];
  quorum?: number;
  /** The policy (or JSON rule) behind it. */
  by: string;
}

export function summarize(verdict: CallPolicyVerdict, by: string): VerdictSummary {
  const named = verdict.policy ? `policy ${verdict.policy.id}` : by;
  if (!verdict.allowed) return { outcome: 'denied', by: named };
  return {
    outcome: verdict.tier,
    ...(verdict.groups ? { groups: verdict.groups } : {}),
    ...(verdict.quorum ? { quorum: verdict.quorum } : {}),
    by: named,
  };
}

/**
 * Whether two summaries disagree: a different outcome, or — where both name people — different groups or quorum.
 * (JSON rules name no groups here: routing names them later, in the approval service.)
 */
export function disagree(active: VerdictSummary, shadow: VerdictSummary): boolean {
  if (active.outcome !== shadow.outcome) return true;
  if (active.groups && shadow.groups && [...active.groups].sort().join() !== [...shadow.groups].sort().join())
    return true;
  return active.quorum !== undefined && shadow.quorum !== undefined && active.quorum !== shadow.quorum;
}

/** A policy's answer, or a refusal naming the error when it throws (it should not): fail closed. */
export function decideClosed(policy: CallPolicy, input: CallPolicyInput): CallPolicyVerdict {
  try {
    return policy.decide(input);
  } catch (error) {
    return {
      allowed: false,
      reason: `${policy.name} failed to evaluate (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}
