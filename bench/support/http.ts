// A small keep-alive HTTP client (node:http, no fetch overhead) and a server-sent-events reader.
import { Agent, request, type IncomingMessage } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

export interface JsonResponse<T = unknown> {
  status: number;
  body: T;
}

export function sendJson<T = unknown>(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  return sendOnce<T>(method, url, body, headers).catch(
    (error: NodeJS.ErrnoException & { reused?: boolean }) => {
      // A kept-alive socket the server closed as the request went out (its keep-alive timeout): the server read
      // nothing, so the request is sent again on a fresh socket, as Node's http docs advise (request.reusedSocket).
      if (error.reused && error.code === 'ECONNRESET') return sendOnce<T>(method, url, body, headers);
      throw error;
    },
  );
}

function sendOnce<T>(
  method: string,
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<JsonResponse<T>> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers: {
          accept: 'application/json',
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: keep the text
          }
          done({ status: res.statusCode ?? 0, body: parsed as T });
        });
        res.on('error', fail);
      },
    );
    req.on('error', (error) => fail(Object.assign(error, { reused: req.reusedSocket })));
    if (payload) req.write(payload);
    req.end();
  });
}

export const getJson = <T = unknown>(url: string, headers?: Record<string, string>) =>
  sendJson<T>('GET', url, undefined, headers);

/** Opens an SSE stream and calls `onEvent` per event; resolves once the response headers arrived. */
export function openEventStream(
  url: string,
  headers: Record<string, string>,
  onEvent: (event: string, data: string) => void,
): Promise<{ close(): void }> {
  return new Promise((done, fail) => {
    const req = request(
      url,
      { headers: { accept: 'text/event-stream', ...headers } },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          fail(new Error(`SSE ${url} answered ${res.statusCode}`));
          res.resume();
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const block = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            let event = 'message';
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith('event:')) event = line.slice(6).trim();
              else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
            }
            if (data.length) onEvent(event, data.join('\n'));
          }
        });
        res.on('error', () => undefined);
        done({ close: () => req.destroy() });
      },
    );
    req.on('error', fail);
    req.end();
  });
}
