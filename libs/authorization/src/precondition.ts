// A tool's precondition: a read-only check of the state of the world a call depends on (`{"replicas": 6}`), evaluated
// when the call waits for a person and again right before the approved call runs. The approver sees its value, the
// decision signs its digest, and a value that changed in between means the call does not run and is asked about again.
// Unlike a preview it fails closed: a check that throws, times out or answers something that is not a small JSON value
// means the call does not run.
import { createHash } from 'node:crypto';
import { canonicalJson } from './fingerprint';
import type { CallerContext, ToolDefinition } from './tool';

/** @defaultValue 2000 ms: a precondition that has not answered by then counts as failed (the call does not run). */
export const DEFAULT_PRECONDITION_TIMEOUT_MS = 2_000;
/** The longest a precondition's value may be as canonical JSON: approvers read it on every channel. */
export const MAX_PRECONDITION_CHARS = 1_000;

/** What a tool declares. `check` must not change anything: it runs for calls that approvers may deny. */
export interface Precondition<A = unknown> {
  check: (args: A, ctx: CallerContext & { callId: string }) => unknown;
  /** @defaultValue {@link DEFAULT_PRECONDITION_TIMEOUT_MS} */
  timeoutMs?: number;
}

/** A precondition's value as evaluated, with the digest a decision signs. */
export interface PreconditionValue {
  value: unknown;
  /** Lowercase hex `sha256(canonicalJSON(value))`. */
  digest: string;
}

export type PreconditionResult = ({ ok: true } & PreconditionValue) | { ok: false; error: string };

/** Lowercase hex `sha256(canonicalJSON(value))`: equal for equal values however they were serialized. */
export function preconditionDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

/** Two evaluations of a precondition saw the same state (canonical JSON compare, by digest). */
export function samePrecondition(
  a: Pick<PreconditionValue, 'digest'>,
  b: Pick<PreconditionValue, 'digest'>,
): boolean {
  return a.digest === b.digest;
}

/**
 * Evaluates the tool's precondition for `args` (already parsed by its schema) under its deadline. Never throws: a check
 * that throws, times out, or answers a value with no JSON form or longer than {@link MAX_PRECONDITION_CHARS} is
 * `{ ok: false }` with why. Undefined when the tool declares none.
 */
export async function evaluatePrecondition(
  tool: Pick<ToolDefinition, 'name' | 'precondition'>,
  args: unknown,
  ctx: CallerContext & { callId: string },
): Promise<PreconditionResult | undefined> {
  const precondition = tool.precondition;
  if (!precondition) return undefined;
  const timeoutMs = precondition.timeoutMs ?? DEFAULT_PRECONDITION_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const value = await Promise.race([Promise.resolve().then(() => precondition.check(args, ctx)), deadline]);
    if (value === undefined) return { ok: false, error: 'it answered nothing' };
    let text: string;
    try {
      text = canonicalJson(value);
    } catch (error) {
      return { ok: false, error: `its answer has no JSON form (${(error as Error).message})` };
    }
    if (text.length > MAX_PRECONDITION_CHARS)
      return {
        ok: false,
        error: `its answer is ${text.length} characters as JSON (at most ${MAX_PRECONDITION_CHARS})`,
      };
    return { ok: true, value: JSON.parse(text) as unknown, digest: preconditionDigest(value) };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** What the model is told when a precondition could not be evaluated (nothing ran). */
export function preconditionFailedMessage(
  toolName: string,
  error: string,
  when: 'asked' | 'approved',
): string {
  return when === 'asked'
    ? `Tool "${toolName}" was not run and not sent for approval: its precondition could not be checked (${error}).`
    : `Tool "${toolName}" was approved but did not run: its precondition could not be checked again before it ` +
        `ran (${error}).`;
}
