// The other side: serving tools over MCP's streamable HTTP transport (sessions, tool-list notifications, a caller
// authenticated per request), with the official server. The repository's ops server serves its tools with it, and the
// tests' MCP server too.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallerContext, ToolDefinition } from '@countersign/authorization';
import { describeZodError } from '@countersign/contracts';
import type { ProviderLogger } from './mcp-connection';
import { CALL_META } from './mcp-tool-provider';

/** A tool as an MCP server offers it. */
export interface ServedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: ToolAnnotations;
  /** Runs the tool; a throw becomes an error result (`isError`) with its message. */
  call(args: Record<string, unknown>, request: ServedCall): Promise<string>;
}

/** Who called and for which Countersign call (from the request's `_meta`, when the caller is Countersign). */
export interface ServedCall {
  caller: string;
  meta: Record<string, unknown>;
  /** Aborted when the client cancels the call (e.g. its timeout passed). */
  signal: AbortSignal;
}

/** A tool declared in code (zod schema, handler) served over MCP; the caller's `_meta` becomes its context. */
export function servedTool(definition: ToolDefinition, annotations?: ToolAnnotations): ServedTool {
  const inputSchema =
    definition.inputSchema ?? (z.toJSONSchema(definition.args, { io: 'input' }) as Record<string, unknown>);
  return {
    name: definition.name,
    description: definition.description,
    inputSchema,
    annotations,
    async call(args, request) {
      const parsed = definition.args.safeParse(args);
      if (!parsed.success)
        throw new Error(
          `invalid arguments: ${describeZodError(parsed.error)
            .map((i) => `${i.path}: ${i.message}`)
            .join('; ')}`,
        );
      const meta = (key: string) => (typeof request.meta[key] === 'string' ? String(request.meta[key]) : '');
      const ctx: CallerContext & { callId: string } = {
        runId: meta(CALL_META.runId),
        agent: meta(CALL_META.agent),
        userId: meta(CALL_META.userId) || request.caller,
        scopes: [],
        callId: meta(CALL_META.callId) || randomUUID(),
      };
      const result = await definition.handler(parsed.data, ctx);
      return typeof result === 'string' ? result : JSON.stringify(result);
    },
  };
}

export interface McpHttpEndpointOptions {
  name: string;
  version: string;
  /** The tools now (asked on every listing). */
  tools: () => readonly ServedTool[];
  /**
   * The caller's ID, or a refusal (401: no valid credential, 403: a principal that may not call). Without it, every
   * request is let in as "anonymous".
   */
  authenticate?: (req: IncomingMessage) => Promise<string | CallerRefusal>;
  logger?: ProviderLogger;
  /** Past this many sessions, the one idle longest is ended (its client gets 404 and starts another). @defaultValue 1000 */
  maxSessions?: number;
  /** A session without a request for this long is ended when the next one opens. @defaultValue 1 hour */
  sessionIdleMs?: number;
}

export interface CallerRefusal {
  status: 401 | 403;
  message: string;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  caller: string;
  lastSeen: number;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** One MCP endpoint (e.g. `POST|GET|DELETE /mcp`) with stateful sessions; mount `handle` on any Node HTTP server. */
export class McpHttpEndpoint {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: McpHttpEndpointOptions) {}

  /** Handles one HTTP request to the endpoint. Never throws: failures are answered. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const caller = this.options.authenticate ? await this.options.authenticate(req) : 'anonymous';
      if (typeof caller !== 'string') {
        const challenge: Record<string, string> =
          caller.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
        return answer(res, caller.status, caller.message, challenge);
      }
      const id = req.headers['mcp-session-id'];
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      let session = typeof id === 'string' ? this.sessions.get(id) : undefined;
      if (session && session.caller !== caller)
        return answer(res, 403, 'the session belongs to another caller');
      if (!session) {
        if (id !== undefined) return answer(res, 404, 'unknown session');
        if (!isInitializeRequest(body)) return answer(res, 400, 'start a session with an initialize request');
        await this.endStaleSessions();
        session = await this.open(caller);
      }
      session.lastSeen = Date.now();
      await session.transport.handleRequest(req, res, body);
    } catch (error) {
      this.options.logger?.warn({ err: (error as Error).message }, 'MCP endpoint: request failed');
      if (!res.headersSent) answer(res, error instanceof BadRequest ? 400 : 500, (error as Error).message);
      else res.end();
    }
  }

  /** Tells every open session that the tool list changed (clients list again). */
  async notifyToolsChanged(): Promise<void> {
    await Promise.all(
      [...this.sessions.values()].map((s) => s.server.sendToolListChanged().catch(() => undefined)),
    );
  }

  async close(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((s) => s.server.close().catch(() => undefined)));
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Clients that went away without ending their session (a crashed worker) must not fill the map for ever. */
  private async endStaleSessions(): Promise<void> {
    const idleBefore = Date.now() - (this.options.sessionIdleMs ?? 3_600_000);
    const byAge = [...this.sessions.entries()].sort((a, b) => a[1].lastSeen - b[1].lastSeen);
    const excess = byAge.length + 1 - (this.options.maxSessions ?? 1000);
    const stale = byAge.filter(([, s], i) => i < excess || s.lastSeen < idleBefore);
    for (const [id, s] of stale) {
      this.sessions.delete(id);
      await s.server.close().catch(() => undefined);
    }
  }

  private async open(caller: string): Promise<Session> {
    const server = new Server(
      { name: this.options.name, version: this.options.version },
      { capabilities: { tools: { listChanged: true } } },
    );
    const session: Session = {
      server,
      caller,
      lastSeen: Date.now(),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void this.sessions.set(sessionId, session),
        onsessionclosed: (sessionId) => void this.sessions.delete(sessionId),
      }),
    };
    session.transport.onclose = () => {
      if (session.transport.sessionId) this.sessions.delete(session.transport.sessionId);
    };
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.options.tools().map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema as { type: 'object' },
        annotations: t.annotations,
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = this.options.tools().find((t) => t.name === request.params.name);
      if (!tool) return errorResult(`unknown tool "${request.params.name}"`);
      const meta = (request.params._meta ?? {}) as Record<string, unknown>;
      try {
        const text = await tool.call(request.params.arguments ?? {}, { caller, meta, signal: extra.signal });
        return { content: [{ type: 'text' as const, text }] };
      } catch (error) {
        return errorResult((error as Error).message);
      }
    });
    await server.connect(session.transport);
    return session;
  }
}

class BadRequest extends Error {}

function errorResult(text: string) {
  return { content: [{ type: 'text' as const, text }], isError: true };
}

function answer(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BadRequest(`the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadRequest('the body is not JSON');
  }
}
