// A tool's preview of a call's effect, for approvers: bounded in time and length, and failing open to "no preview".
import type { CallerContext, ToolDefinition } from './tool';

/** @defaultValue 1000 ms: a preview never holds a request up for longer. */
export const DEFAULT_PREVIEW_TIMEOUT_MS = 1_000;

/**
 * The tool's preview of `args` (already parsed by its schema), on one line and at most `maxChars` long; undefined
 * when the tool has none, or it throws, times out or answers anything but text. Never throws.
 */
export async function previewCall(
  tool: Pick<ToolDefinition, 'preview'>,
  args: unknown,
  ctx: CallerContext & { callId: string },
  { timeoutMs = DEFAULT_PREVIEW_TIMEOUT_MS, maxChars }: { timeoutMs?: number; maxChars: number },
): Promise<string | undefined> {
  if (!tool.preview) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  try {
    const text = await Promise.race([Promise.resolve().then(() => tool.preview!(args, ctx)), deadline]);
    if (typeof text !== 'string') return undefined;
    const line = text.replace(/\s+/g, ' ').trim();
    if (line.length === 0) return undefined;
    return line.length <= maxChars ? line : `${line.slice(0, maxChars - 1).trimEnd()}…`;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
