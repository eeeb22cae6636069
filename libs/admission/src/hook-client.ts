// One signed POST to an admission hook, bounded by its timeout. Every way of not getting a usable answer (timeout,
// non-2xx, a body that is not the answer's JSON, an unreachable hook) is a failure with a reason, never a throw.
import { webhookSignature } from '@countersign/authorization';
import { describeZodError } from '@countersign/contracts';
import { readBoundedText } from '@countersign/tool-providers';
import type { z } from 'zod';
import type { AdmissionHook } from './admission-config.schema';

export const SIGNATURE_HEADER = 'countersign-signature';
export const TIMESTAMP_HEADER = 'countersign-timestamp';
/** Answers longer than this (bytes) are bad bodies. */
export const MAX_ANSWER_BYTES = 1_048_576;

export type HookReply<T> = { ok: true; answer: T; ms: number } | { ok: false; reason: string; ms: number };

/** A hook with its secret read (start-up refuses a hook whose variable is unset). */
export interface ResolvedHook extends AdmissionHook {
  secret: string;
}

/** Reads each hook's secret; throws naming the hook and the variable when one is unset or empty. */
export function resolveHooks(
  hooks: readonly AdmissionHook[],
  secretOf: (variable: string) => string | undefined,
  where: string,
): ResolvedHook[] {
  return hooks.map((hook, i) => {
    const secret = secretOf(hook.secretEnv);
    if (!secret)
      throw new Error(
        `${where}[${i}].secretEnv: ${hook.secretEnv} (the secret of hook "${hook.name}") is not set`,
      );
    return { ...hook, secret };
  });
}

/**
 * POSTs `payload` as JSON, signed like Countersign's webhooks (`v1=` HMAC-SHA256 over `v1:<timestamp>:<body>`, see
 * libs/authorization's webhook-signature), and parses the answer with `schema`.
 */
export async function callHook<T>(
  hook: ResolvedHook,
  payload: unknown,
  schema: z.ZodType<T>,
  now: () => number = Date.now,
): Promise<HookReply<T>> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  const json = JSON.stringify(payload);
  const timestamp = String(Math.floor(now() / 1000));
  const signal = AbortSignal.timeout(hook.timeoutMs);
  let body: { text: string; complete: boolean };
  let status: number;
  try {
    const response = await fetch(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_HEADER]: webhookSignature(hook.secret, timestamp, json),
      },
      body: json,
      signal,
      redirect: 'error',
    });
    status = response.status;
    // Read within the timeout and never past the cap: a hook streaming a huge answer is cut off, not buffered.
    body = await readBoundedText(response, MAX_ANSWER_BYTES);
  } catch (error) {
    if (signal.aborted) return { ok: false, reason: `timed out after ${hook.timeoutMs} ms`, ms: elapsed() };
    return { ok: false, reason: `unreachable (${causeOf(error)})`, ms: elapsed() };
  }
  if (status < 200 || status > 299) return { ok: false, reason: `answered HTTP ${status}`, ms: elapsed() };
  if (!body.complete)
    return { ok: false, reason: `answered more than ${MAX_ANSWER_BYTES} bytes`, ms: elapsed() };
  let answer: unknown;
  try {
    answer = JSON.parse(body.text);
  } catch {
    return { ok: false, reason: 'answered a body that is not JSON', ms: elapsed() };
  }
  const parsed = schema.safeParse(answer);
  if (!parsed.success) {
    const issues = describeZodError(parsed.error).map((i) => `${i.path}: ${i.message}`);
    return { ok: false, reason: `answered a bad body (${issues.join('; ')})`, ms: elapsed() };
  }
  return { ok: true, answer: parsed.data, ms: elapsed() };
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
