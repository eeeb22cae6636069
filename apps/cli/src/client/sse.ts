// A minimal Server-Sent Events reader over fetch (Node has no EventSource): yields each event's name, data and id.

export interface SseMessage {
  event: string;
  data: string;
  /** The `id:` field, when the event has one (send it back as Last-Event-ID to go on after it). */
  id?: string;
}

/** Reads `response.body` until the server closes it (or `signal` aborts). */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = boundary(buffer)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^(\r?\n){2}/, '');
      const message = parseBlock(block);
      if (message) yield message;
    }
  }
}

function boundary(buffer: string): number {
  const lf = buffer.indexOf('\n\n');
  const crlf = buffer.indexOf('\r\n\r\n');
  if (lf < 0) return crlf;
  if (crlf < 0) return lf;
  return Math.min(lf, crlf);
}

function parseBlock(block: string): SseMessage | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  return data.length ? { event, data: data.join('\n'), ...(id !== undefined ? { id } : {}) } : undefined;
}
