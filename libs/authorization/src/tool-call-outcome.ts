// What the pipeline says about one call. `content` is always what the model is told.
import type { Tier } from '@countersign/contracts';
import type { PolicyDecision } from './confirmation-handler';
import type { ConfirmationRoute } from './plugins';
import type { PreconditionValue } from './precondition';

interface Base {
  callId: string;
  toolName: string;
  content: string;
}

export type DeniedBy = 'rbac' | 'guard' | 'person' | 'policy' | 'expired' | 'no_route';

export interface FingerprintMismatch {
  /** Readable form of the parked call (tool name ␟ canonical JSON). */
  expected: string;
  /** Readable form of what the approver was shown, when the decision says. */
  shown?: string;
  decisionFingerprint: string;
}

export type ToolCallOutcome =
  | (Base & {
      kind: 'executed';
      result: unknown;
      approvedBy: 'auto' | 'person' | 'policy';
      /** Set when a confirmation handler approved it: which one (and rule). */
      policyDecision?: PolicyDecision;
    })
  | (Base & {
      kind: 'denied';
      by: DeniedBy;
      approvers?: readonly string[];
      /** Set when a confirmation handler denied it: which one (and rule). */
      policyDecision?: PolicyDecision;
    })
  /** An approver answered with text instead of a verdict: the call did not run; `content` carries their words. */
  | (Base & { kind: 'responded'; approvers: readonly string[]; response: string })
  | (Base & { kind: 'skipped'; plugin: string })
  | (Base & {
      kind: 'pending_confirmation';
      args: unknown;
      tier: Tier;
      fingerprint: string;
      definitionHash: string;
      mismatch?: FingerprintMismatch;
      /** Why a confirmation handler did not decide, when it failed. */
      handlerFallback?: string;
      /** Set when a before-callback sent the call to people: who it named to decide. */
      route?: ConfirmationRoute;
      /** The tool's precondition as evaluated for this call: approvers see it, the decision signs its digest. */
      precondition?: PreconditionValue;
    })
  | (Base & { kind: 'manual_required'; args: unknown; fingerprint: string; definitionHash: string })
  | (Base & { kind: 'aborted'; plugin: string; reason: string })
  | (Base & { kind: 'error'; message: string });

export type ToolCallOutcomeKind = ToolCallOutcome['kind'];
