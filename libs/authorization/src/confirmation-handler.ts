// A ConfirmationHandler decides a confirm-tier call by policy (e.g. approve all in staging) or asks a person.
import type { CallerContext } from './tool';

/**
 * Who decided in a person's place, for the audit and the run's followers: the handler (`handler:<name>`) and, when
 * it has rules, the rule that decided.
 */
export interface PolicyDecision {
  by: string;
  rule?: string;
}

export type HandlerVerdict =
  | { decision: 'approve'; decidedBy?: PolicyDecision }
  | { decision: 'deny'; reason?: string; decidedBy?: PolicyDecision }
  | { decision: 'ask' };

export interface ConfirmationRequest extends CallerContext {
  callId: string;
  toolName: string;
  args: unknown;
  fingerprint: string;
}

export type ConfirmationHandler = (request: ConfirmationRequest) => Promise<HandlerVerdict> | HandlerVerdict;

/** @defaultValue 5000 ms */
export const DEFAULT_CONFIRMATION_TIMEOUT_MS = 5_000;

/**
 * Runs the handler with a deadline. Throwing, timing out or answering nonsense all mean "ask a person":
 * a broken policy must never execute anything.
 */
export async function consultHandler(
  handler: ConfirmationHandler,
  request: ConfirmationRequest,
  timeoutMs = DEFAULT_CONFIRMATION_TIMEOUT_MS,
): Promise<HandlerVerdict & { fallback?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const verdict = await Promise.race([Promise.resolve().then(() => handler(request)), deadline]);
    if (verdict === 'timeout')
      return { decision: 'ask', fallback: `confirmation handler timed out after ${timeoutMs} ms` };
    if (verdict?.decision === 'approve' || verdict?.decision === 'deny' || verdict?.decision === 'ask')
      return verdict;
    return { decision: 'ask', fallback: 'confirmation handler returned no verdict' };
  } catch (error) {
    return {
      decision: 'ask',
      fallback: `confirmation handler threw: ${(error as Error)?.message ?? String(error)}`,
    };
  } finally {
    clearTimeout(timer);
  }
}
