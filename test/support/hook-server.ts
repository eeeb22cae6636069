// An admission hook endpoint for the tests (libs/admission): it checks the signature of every request it gets,
// records what it got and answers as the test says (JSON, a status with a raw body, or never).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature } from '@countersign/authorization';

export const HOOK_SECRET = 'admission-hook-secret-3f9a1c';

export interface HookCall {
  stage: 'before_tool' | 'after_tool' | 'confirmation';
  tool: string;
  arguments: Record<string, unknown>;
  fingerprint: string;
  principal: string;
  agent: string;
  runId: string;
  callId: string;
  result?: unknown;
}

/** How the hook answers one request: JSON, a status with a raw body, or never. */
export type Reply = { json: unknown } | { status: number; raw: string } | 'hang';

/** The hook endpoint: records what it got (and whether its signature held) and answers as the test says. */
export class HookServer {
  readonly calls: (HookCall & { signed: boolean })[] = [];
  /** What happened, in order: the hook's requests here, the test's own observations beside them. */
  readonly stages: string[] = [];
  before: (call: HookCall) => Reply | Promise<Reply> = () => ({ json: { action: 'allow' } });
  after: (call: HookCall) => Reply | Promise<Reply> = () => ({ json: { action: 'keep' } });
  /** A confirmation handler's hook (stage `confirmation`). */
  confirm: (call: HookCall) => Reply | Promise<Reply> = () => ({ json: { decision: 'ask' } });
  private server?: Server;
  private readonly hanging: ServerResponse[] = [];
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const check = verifyWebhookSignature({
      secret: HOOK_SECRET,
      body,
      timestamp: req.headers['countersign-timestamp'] as string | undefined,
      signature: req.headers['countersign-signature'] as string | undefined,
    });
    const call = JSON.parse(body.toString('utf8')) as HookCall;
    this.calls.push({ ...call, signed: check.ok });
    const stage = { before_tool: 'before', after_tool: 'after', confirmation: 'confirm' }[call.stage];
    this.stages.push(`${stage} ${call.tool}`);
    if (!check.ok) return void res.writeHead(401).end(check.reason);
    const answer = { before_tool: this.before, after_tool: this.after, confirmation: this.confirm }[
      call.stage
    ];
    const reply = await answer(call);
    if (reply === 'hang') return void this.hanging.push(res);
    if ('json' in reply)
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.json));
    res.writeHead(reply.status).end(reply.raw);
  }

  forRun(runId: string) {
    return this.calls.filter((c) => c.runId === runId);
  }

  async stop(): Promise<void> {
    this.hanging.forEach((res) => res.destroy());
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A port nothing listens on: a server started and closed again. */
export async function closedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  return port;
}
