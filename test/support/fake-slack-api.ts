// A local HTTP server standing in for Slack's Web API: it records what the official SDK sends
// (method, bearer token, channel, blocks) and answers like Slack does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackCall {
  method: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
  /** What the fake answered (for chat.postMessage: the channel ID and ts of the message). */
  reply?: { ok: boolean; channel?: unknown; ts?: unknown };
}

export class FakeSlackApi {
  readonly calls: SlackCall[] = [];
  /** While true every call answers HTTP 503 (an outage). */
  failing = false;
  /**
   * A call this picks is recorded and its connection closed without an answer: the caller cannot know whether
   * Slack carried it out (for a chat.postMessage, whether the message was posted).
   */
  hangUpOn?: (call: SlackCall) => boolean;
  private server?: Server;
  private nextTs = 1_000;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      req.on('end', () => {
        const method = (req.url ?? '')
          .replace(/^\/api\//, '')
          .replace(/^\//, '')
          .split('?')[0];
        const body = parseBody(raw, req.headers['content-type'] ?? '');
        const call: SlackCall = { method, authorization: req.headers.authorization, body };
        this.calls.push(call);
        if (this.hangUpOn?.(call)) {
          req.socket.destroy();
          return;
        }
        if (this.failing) {
          res.writeHead(503).end('unavailable');
          return;
        }
        const reply = (call.reply =
          method === 'chat.postMessage'
            ? {
                ok: true,
                channel: `C-${String(body.channel).replace(/^#/, '')}`,
                ts: `${this.nextTs++}.000100`,
              }
            : { ok: true, channel: body.channel, ts: body.ts });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/api/`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Where the message about `needle` was posted successfully: { channel, ts }. */
  replyTo(needle: string): { channel: unknown; ts: unknown } | undefined {
    const call = this.find('chat.postMessage', needle).find((c) => c.reply?.ok);
    return call?.reply ? { channel: call.reply.channel, ts: call.reply.ts } : undefined;
  }

  /** Calls of one method whose text or blocks mention `needle`. */
  find(method: string, needle: string): SlackCall[] {
    return this.calls.filter((c) => c.method === method && JSON.stringify(c.body).includes(needle));
  }
}

/** The SDK posts form-encoded bodies with `blocks` (and a modal's `view`) as a JSON string. */
function parseBody(raw: string, contentType: string): Record<string, unknown> {
  if (contentType.includes('application/json')) return JSON.parse(raw || '{}') as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    body[key] =
      key === 'blocks' || key === 'attachments' || key === 'view' ? (JSON.parse(value) as unknown) : value;
  }
  return body;
}
