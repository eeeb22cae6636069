// A small, real MCP server for the tests (the official SDK's server over streamable HTTP, on a local port): it counts
// every call it receives, can change or add a tool while a call is parked, can go down and come back on the same
// port, and has tools that are slow, large, failing, or that echo the credential they were sent.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type CallerRefusal,
  McpHttpEndpoint,
  type ServedCall,
  type ServedTool,
} from '@countersign/tool-providers';

export interface ReceivedCall {
  tool: string;
  args: Record<string, unknown>;
  caller: string;
  meta: Record<string, unknown>;
}

type ToolSpec = Omit<ServedTool, 'call'> & {
  call: (args: Record<string, unknown>, request: ServedCall) => Promise<string> | string;
};

export class TestMcpServer {
  /** Every call received, in order (the ground truth of "how many times did it run"). */
  readonly calls: ReceivedCall[] = [];
  /** Authorization headers received, in order. */
  readonly authorizations: string[] = [];
  /** Calls the client cancelled while they ran. */
  cancelled = 0;
  /** tools/list requests answered. */
  listings = 0;
  private readonly tools = new Map<string, ToolSpec>();
  private http?: Server;
  private endpoint?: McpHttpEndpoint;
  private port = 0;

  /**
   * @param token the bearer token it accepts (any, when undefined)
   * @param echoRejected answer a wrong credential with a 401 that repeats it (a careless server's error page)
   */
  constructor(
    private readonly token?: string,
    private readonly echoRejected = false,
  ) {
    this.define({
      name: 'lookup',
      description: 'Looks a key up (read-only).',
      inputSchema: {
        type: 'object',
        properties: { key: { type: 'string', minLength: 1 } },
        required: ['key'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true },
      call: (args) => `found ${String(args.key)}`,
    });
    this.define({
      name: 'write_note',
      description: 'Writes a note.',
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: true },
      call: (args) => `noted: ${String(args.text)}`,
    });
    this.define({
      name: 'slow',
      description: 'Answers after `ms` milliseconds, unless cancelled.',
      inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
      annotations: { readOnlyHint: true },
      call: (args, request) =>
        new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => resolve('done'), Number(args.ms)).unref();
          request.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            this.cancelled++;
            reject(new Error('cancelled'));
          });
        }),
    });
    this.define({
      name: 'big',
      description: 'Returns `bytes` characters.',
      inputSchema: { type: 'object', properties: { bytes: { type: 'integer' } }, required: ['bytes'] },
      annotations: { readOnlyHint: true },
      call: (args) => 'x'.repeat(Number(args.bytes)),
    });
    this.define({
      name: 'whoami',
      description: 'Says which credential it was called with (a careless server echoing a secret).',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
      call: () => `you sent: ${this.authorizations.at(-1) ?? 'nothing'}`,
    });
    this.define({
      name: 'fail',
      description: 'Always fails.',
      inputSchema: { type: 'object', properties: {} },
      call: () => {
        throw new Error('disk full');
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  /** Open MCP sessions (clients that connected and did not end theirs). */
  get sessions(): number {
    return this.endpoint?.sessionCount ?? 0;
  }

  count(tool: string): number {
    return this.calls.filter((c) => c.tool === tool).length;
  }

  /** Starts listening (again on the same port after `stop`). */
  async start(): Promise<void> {
    this.endpoint = new McpHttpEndpoint({
      name: 'test-mcp-server',
      version: '1.0.0',
      tools: () => {
        this.listings++;
        return [...this.tools.values()].map((spec) => this.served(spec));
      },
      authenticate: async (req) => this.authenticate(req),
    });
    const endpoint = this.endpoint;
    this.http = createServer((req, res) => {
      if (!req.url?.startsWith('/mcp')) {
        res.writeHead(404).end();
        return;
      }
      if (this.echoRejected && this.token && req.headers.authorization !== `Bearer ${this.token}`) {
        this.authorizations.push(req.headers.authorization ?? '');
        res.writeHead(401, { 'content-type': 'text/plain' }).end(`rejected ${req.headers.authorization}`);
        return;
      }
      void endpoint.handle(req, res);
    });
    await new Promise<void>((resolve) => this.http!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.http.address() as AddressInfo).port;
  }

  /** Goes down: sessions end, connections drop, the port is free. */
  async stop(): Promise<void> {
    await this.endpoint?.close();
    const http = this.http;
    this.http = undefined;
    if (!http) return;
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  }

  /** Changes a tool as a deploy of the server would; `notify` sends tools/list_changed to every session. */
  async changeTool(name: string, change: Partial<ToolSpec>, notify = true): Promise<void> {
    this.tools.set(name, { ...this.tools.get(name)!, ...change });
    if (notify) await this.endpoint?.notifyToolsChanged();
  }

  async addTool(spec: ToolSpec, notify = true): Promise<void> {
    this.define(spec);
    if (notify) await this.endpoint?.notifyToolsChanged();
  }

  private define(spec: ToolSpec): void {
    this.tools.set(spec.name, spec);
  }

  private served(spec: ToolSpec): ServedTool {
    return {
      ...spec,
      call: async (args, request) => {
        this.calls.push({ tool: spec.name, args, caller: request.caller, meta: request.meta });
        return spec.call(args, request);
      },
    };
  }

  private authenticate(req: IncomingMessage): string | CallerRefusal {
    const header = req.headers.authorization ?? '';
    this.authorizations.push(header);
    if (!this.token || header === `Bearer ${this.token}`) return this.token ? 'countersign' : 'anyone';
    return { status: 401, message: 'wrong token' };
  }
}
