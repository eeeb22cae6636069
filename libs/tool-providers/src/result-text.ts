// What the model reads of a provider's answer: text, bounded. A result is stored with the run (Redis) and sent to the
// model on every later turn, so a provider cannot grow either without limit; the model is told what was cut.

/** An MCP tool result, as far as the model is concerned (the SDK's CallToolResult, loosely typed). */
export interface McpToolResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

/** One content block as text; binary blocks are described, never inlined. */
function blockText(block: unknown): string {
  if (!block || typeof block !== 'object') return '';
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? b.text : '';
    case 'image':
    case 'audio':
      return `[${String(b.type)} ${String(b.mimeType ?? '')}, ${base64Bytes(b.data)} bytes, not shown]`;
    case 'resource': {
      const resource = (b.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === 'string') return resource.text;
      return `[resource ${String(resource.uri ?? '')}, ${base64Bytes(resource.blob)} bytes, not shown]`;
    }
    case 'resource_link':
      return `[resource link ${String(b.uri ?? '')}${b.name ? ` (${String(b.name)})` : ''}]`;
    default:
      return `[${String(b.type)} content, not shown]`;
  }
}

function base64Bytes(data: unknown): number {
  return typeof data === 'string' ? Math.floor((data.replace(/=+$/, '').length * 3) / 4) : 0;
}

/** The result's text: its content blocks joined, or its structured content as JSON when it has no text. */
export function mcpResultText(result: McpToolResult): string {
  const parts = (result.content ?? []).map(blockText).filter((t) => t !== '');
  if (parts.length > 0) return parts.join('\n');
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return '';
}

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes (never inside a character), with a note saying how much the whole
 * was, so the model knows it saw a part. `complete: false`: `text` is already only the start of the result.
 */
export function capText(text: string, maxBytes: number, complete = true): string {
  const size = Buffer.byteLength(text);
  if (size <= maxBytes && complete) return text;
  const whole = complete ? `was ${size} bytes` : `was longer than ${maxBytes} bytes`;
  const note = `\n[truncated: the result ${whole}; only the first ${Math.min(size, maxBytes)} are shown]`;
  let cut = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
  // A character cut in half decodes as U+FFFD at the end: drop it.
  if (cut.endsWith('\uFFFD') && !text.startsWith(cut)) cut = cut.slice(0, -1);
  return cut + note;
}
