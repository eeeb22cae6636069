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
  isJSONRPCRequest,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallerContext, ToolDefinition } from '@countersign/authorization';
import { describeZodError } from '@countersign/contracts';
import type { ProviderLogger } from './mcp-connection';
import { SessionTable } from './mcp-sessions';
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
  /** Sends a progress notification, when the client asked for them (a progress token); otherwise does nothing. */
  progress?: (progress: number, total?: number, message?: string) => Promise<void>;
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
  /** The tools now (asked on every listing). Required unless `server` builds the sessions' servers. */
  tools?: () => readonly ServedTool[];
  /**
   * Builds the MCP server of a new session for `caller` (its handlers, capabilities), instead of one serving `tools`:
   * for a server that does more than list and call tools (a gateway). It is connected to the session's transport here.
   */
  server?: (caller: string) => Server;
  /**
   * A client whose connection drops before its POST was answered is taken to have cancelled the requests of that POST
   * (their handlers' signals abort), since without resumable streams their answers can never reach it. Off by default:
   * MCP lets a disconnect stand for nothing, and a tool that must not outlive its caller asks for this.
   * @defaultValue false
   */
  cancelOnDisconnect?: boolean;
  /**
   * The caller's ID, or a refusal (401: no valid credential, 403: a principal that may not call). Without it, every
   * request is let in as "anonymous".
   */
  authenticate?: (req: IncomingMessage) => Promise<string | CallerRefusal>;
  logger?: ProviderLogger;
  /**
   * Sessions one caller may hold at once. A caller at this many that opens another loses its own longest-idle session
   * (its client gets 404 and starts another); no other caller's session is ever ended for it. @defaultValue 32
   */
  maxSessionsPerCaller?: number;
  /**
   * Sessions of all callers together, a bound on memory: past it a new session is refused (503) until one ends, and no
   * session is ended to make room. @defaultValue 1000
   */
  maxSessions?: number;
  /** A session without a request for this long is ended when the next one opens. @defaultValue 1 hour */
  sessionIdleMs?: number;
  /**
   * Asked before a caller opens a session and before each of its tool calls (a call made as a task too): a refusal is
   * the answer (with `Retry-After` when it says when), and the request goes no further. Without it nothing is limited.
   */
  rateLimit?: (caller: string, request: LimitedRequest) => Promise<RequestRefusal | undefined>;
}

/** The requests `rateLimit` is asked about. */
export type LimitedRequest = 'session-open' | 'tool-call';

export interface CallerRefusal {
  status: 401 | 403;
  message: string;
}

/** A request refused for its rate (429) or because the limits cannot be checked (503). */
export interface RequestRefusal {
  status: 429 | 503;
  message: string;
  retryAfterSeconds?: number;
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
  private readonly sessions: SessionTable<Session>;

  constructor(private readonly options: McpHttpEndpointOptions) {
    if (!options.tools && !options.server)
      throw new TypeError('McpHttpEndpoint: give either `tools` or `server`');
    this.sessions = new SessionTable<Session>(
      {
        perCaller: options.maxSessionsPerCaller ?? 32,
        total: options.maxSessions ?? 1000,
        idleMs: options.sessionIdleMs ?? 3_600_000,
      },
      (session) => void session.server.close().catch(() => undefined),
    );
  }

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
      const opening = !session;
      if (!session) {
        if (id !== undefined) return answer(res, 404, 'unknown session');
        if (!isInitializeRequest(body)) return answer(res, 400, 'start a session with an initialize request');
        const refused = (await this.rateLimit(caller, 'session-open')) ?? this.sessions.admit(caller);
        if (refused) return this.refuse(res, caller, 'session-open', refused);
        const fresh = this.open(caller);
        await fresh.server.connect(fresh.transport).catch((error: unknown) => {
          this.sessions.end(fresh);
          throw error;
        });
        session = fresh;
      } else {
        for (let calls = toolCalls(body); calls > 0; calls--) {
          const refused = await this.rateLimit(caller, 'tool-call');
          if (refused) return this.refuse(res, caller, 'tool-call', refused);
        }
      }
      this.sessions.touch(session);
      if (this.options.cancelOnDisconnect && req.method === 'POST') cancelWhenDropped(session, res, body);
      try {
        await session.transport.handleRequest(req, res, body);
      } finally {
        // An initialize the transport refused (a bad header, say) opened nothing: its place is free again.
        if (opening && !session.transport.sessionId) this.sessions.end(session);
      }
    } catch (error) {
      this.options.logger?.warn({ err: (error as Error).message }, 'MCP endpoint: request failed');
      if (!res.headersSent) answer(res, error instanceof BadRequest ? 400 : 500, (error as Error).message);
      else res.end();
    }
  }

  /** Tells every open session that the tool list changed (clients list again). */
  async notifyToolsChanged(): Promise<void> {
    await Promise.all(this.sessions.all().map((s) => s.server.sendToolListChanged().catch(() => undefined)));
  }

  async close(): Promise<void> {
    const sessions = this.sessions.clear();
    await Promise.all(sessions.map((s) => s.server.close().catch(() => undefined)));
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  private rateLimit(caller: string, request: LimitedRequest): Promise<RequestRefusal | undefined> {
    return this.options.rateLimit?.(caller, request) ?? Promise.resolve(undefined);
  }

  private refuse(
    res: ServerResponse,
    caller: string,
    request: LimitedRequest,
    refusal: RequestRefusal,
  ): void {
    // Rate limits log once per flood themselves; a full server is the operator's to know about.
    const log = refusal.status === 503 ? 'warn' : 'debug';
    this.options.logger?.[log]({ caller, request, reason: refusal.message }, 'MCP endpoint: request refused');
    const retryAfter: Record<string, string> =
      refusal.retryAfterSeconds === undefined ? {} : { 'retry-after': String(refusal.retryAfterSeconds) };
    answer(res, refusal.status, refusal.message, retryAfter);
  }

  /** A new session of `caller`, in the table at once (in the same synchronous step as `admit`); connected after. */
  private open(caller: string): Session {
    const server = this.options.server ? this.options.server(caller) : this.toolServer(caller);
    const session: Session = {
      server,
      caller,
      lastSeen: Date.now(),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => this.sessions.name(sessionId, session),
        onsessionclosed: () => this.sessions.remove(session),
      }),
    };
    session.transport.onclose = () => this.sessions.remove(session);
    this.sessions.add(session);
    return session;
  }

  /** A session's server when the endpoint serves `tools` itself. */
  private toolServer(caller: string): Server {
    const tools = this.options.tools ?? (() => []);
    const server = new Server(
      { name: this.options.name, version: this.options.version },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools().map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema as { type: 'object' },
        annotations: t.annotations,
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = tools().find((t) => t.name === request.params.name);
      if (!tool) return errorResult(`unknown tool "${request.params.name}"`);
      const meta = (request.params._meta ?? {}) as Record<string, unknown>;
      const progressToken = request.params._meta?.progressToken;
      const progress =
        progressToken === undefined
          ? undefined
          : (value: number, total?: number, message?: string) =>
              extra.sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: value, total, message },
              });
      try {
        const text = await tool.call(request.params.arguments ?? {}, {
          caller,
          meta,
          signal: extra.signal,
          progress,
        });
        return { content: [{ type: 'text' as const, text }] };
      } catch (error) {
        return errorResult((error as Error).message);
      }
    });
    return server;
  }
}

/**
 * Without an event store a POST's answers travel only on its own response stream: when that connection drops first,
 * they can never be delivered, so the session's server is told (as if the client had sent `notifications/cancelled`)
 * and the requests' handlers see their signals abort.
 */
function cancelWhenDropped(session: Session, res: ServerResponse, body: unknown): void {
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  const ids = messages.filter(isJSONRPCRequest).map((m) => m.id);
  if (ids.length === 0) return;
  res.once('close', () => {
    if (res.writableFinished) return;
    for (const requestId of ids)
      session.transport.onmessage?.({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId, reason: 'the client disconnected' },
      });
  });
}

class BadRequest extends Error {}

/** How many tool calls (`tools/call`, with or without a task) a POST body carries. */
function toolCalls(body: unknown): number {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.filter((m) => isJSONRPCRequest(m) && m.method === 'tools/call').length;
}

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
