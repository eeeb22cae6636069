// What a service's `policy` config section gives its pipelines: the Cedar set that decides in RBAC's place (when one
// is configured) and the shadow set compared beside the active rules, reported through the service's log and metrics.
import type { CallPolicy, ShadowDisagreement, ShadowPolicy } from '@countersign/authorization';
import { CedarPolicySet, PolicyLoadError, type PolicyPrincipal } from './cedar-policy-set';
import type { PolicyConfig } from './policy-config.schema';

export interface PipelinePolicies {
  callPolicy?: CallPolicy;
  shadowPolicy?: ShadowPolicy;
}

/** Where a service reports what its shadow set says: a structured log line and its metrics. */
export interface ShadowSink {
  warn(fields: Record<string, unknown>, message: string): void;
  disagreements: { inc(labels: { active: string; shadow: string }): void };
  errors: { inc(): void };
}

/**
 * Loads the configured sets once (every agent of a service shares them). Throws a PolicyLoadError whose message starts
 * with `where` (e.g. `AGENTS_CONFIG: policy.cedar`) and names the file, line and policy.
 */
export function loadPolicies(
  config: PolicyConfig | undefined,
  principals: readonly PolicyPrincipal[],
  where: string,
  sink: ShadowSink,
): PipelinePolicies {
  const load = (directory: string, field: string) => {
    try {
      return CedarPolicySet.load(directory, principals);
    } catch (error) {
      throw new PolicyLoadError(`${where}.${field}: ${(error as Error).message}`);
    }
  };
  const callPolicy = config?.cedar ? load(config.cedar, 'cedar') : undefined;
  const shadow = config?.shadow ? load(config.shadow.cedar, 'shadow.cedar') : undefined;
  return {
    ...(callPolicy ? { callPolicy } : {}),
    // The shadow is asked through `evaluate`, so an error is counted as one instead of compared as a refusal.
    ...(shadow
      ? { shadowPolicy: shadowReporting({ name: shadow.name, decide: (i) => shadow.evaluate(i) }, sink) }
      : {}),
  };
}

/** A shadow set whose disagreements and errors are logged and counted, never thrown. */
export function shadowReporting(policy: CallPolicy, sink: ShadowSink): ShadowPolicy {
  return {
    policy,
    onDisagreement: (d: ShadowDisagreement) => {
      sink.disagreements.inc({ active: d.active.outcome, shadow: d.shadow.outcome });
      sink.warn(
        {
          event: 'policy.shadow_disagreement',
          principal: d.input.principal,
          agent: d.input.agent,
          tool: d.input.toolName,
          active: d.active,
          shadow: d.shadow,
        },
        'shadow policy disagrees with the active rules',
      );
    },
    onError: ({ input, reason }) => {
      sink.errors.inc();
      sink.warn(
        {
          event: 'policy.shadow_error',
          principal: input.principal,
          agent: input.agent,
          tool: input.toolName,
          reason,
        },
        'shadow policy failed to evaluate',
      );
    },
  };
}
