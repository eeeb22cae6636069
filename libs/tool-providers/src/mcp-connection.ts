// One configured MCP server, through the official client: connects (spawning a stdio server or opening a streamable
// HTTP session), lists its tools at start and again on `notifications/tools/list_changed`, calls them with a timeout,
// and reconnects (restarting a stdio server) with backoff after a failure. A failure never throws past `callTool`
// as anything but a ProviderCallError whose message is written for the model.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { backoffDelay } from './backoff';
import type { McpServerConfig } from './provider-config.schema';
import type { McpToolResult } from './result-text';
import type { SecretSource } from './secrets';

/** What a server advertised for one tool (the SDK's Tool, as far as Countersign reads it). */
export type AdvertisedTool = Pick<Tool, 'name' | 'title' | 'description' | 'inputSchema' | 'annotations'>;

export type ConnectionState = 'idle' | 'connecting' | 'connected' | 'waiting' | 'closed';

export type ProviderLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** A call that did not produce a result; `message` is what the model is told (secrets already scrubbed). */
export class ProviderCallError extends Error {
  constructor(
    message: string,
    /** False only when the request certainly never reached the server. */
    readonly mayHaveRun: boolean,
  ) {
    super(message);
    this.name = this.constructor.name;
  }
}

const CLIENT_INFO = { name: 'countersign', version: '0.1.0' };
/** A server whose tool list never ends (or a cursor loop) is cut off here. */
const MAX_TOOL_PAGES = 100;
/** A connection that lived this long resets the restart backoff; one that keeps dying right away backs off. */
const STABLE_AFTER_MS = 30_000;
const MAX_STDERR_LINE = 2_000;

export interface CallOptions {
  timeoutMs: number;
  /** Sent as the request's `_meta` (who asks, which call): never secrets. */
  meta?: Record<string, unknown>;
}

export class McpConnection {
  private state: ConnectionState = 'idle';
  private client?: Client;
  /** The HTTP transport of `client`, to end its session when closing. */
  private session?: StreamableHTTPClientTransport;
  private tools: readonly AdvertisedTool[] = [];
  private readonly listeners = new Set<(tools: readonly AdvertisedTool[]) => void>();
  private connecting?: Promise<void>;
  private retryTimer?: NodeJS.Timeout;
  private retryAt = 0;
  private failures = 0;
  private connectedAt = 0;
  private lastError = 'not connected yet';
  private listing?: Promise<void>;
  private relist = false;
  private readonly inFlight = new Set<AbortController>();

  constructor(
    readonly server: string,
    private readonly config: McpServerConfig,
    private readonly secrets: SecretSource,
    private readonly logger: ProviderLogger,
  ) {}

  /** Connects once, waiting at most `connectTimeoutMs`; a failure is logged and retried in the background. Never throws. */
  async start(): Promise<void> {
    if (this.state !== 'idle') return;
    await this.connect();
  }

  get status(): { state: ConnectionState; lastError?: string; tools: number } {
    return {
      state: this.state,
      lastError: this.state === 'connected' ? undefined : this.lastError,
      tools: this.tools.length,
    };
  }

  /** The tools as last listed; kept while the server is away, so a call says the server is unreachable. */
  currentTools(): readonly AdvertisedTool[] {
    return this.tools;
  }

  /** Called with the new list whenever a listing differs from the last one. Returns the unsubscribe function. */
  onToolsChanged(listener: (tools: readonly AdvertisedTool[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Lists the tools again now (a listing in progress is followed by one more). Never throws. */
  async refresh(): Promise<void> {
    const client = this.client;
    if (this.state !== 'connected' || !client) return;
    if (this.listing) {
      this.relist = true;
      return this.listing;
    }
    this.listing = (async () => {
      try {
        do {
          this.relist = false;
          await this.listInto(client);
        } while (this.relist && this.client === client);
      } catch (error) {
        this.logger.warn(
          { server: this.server, err: this.text(error) },
          'MCP server: listing its tools failed',
        );
      } finally {
        this.listing = undefined;
      }
    })();
    return this.listing;
  }

  /** Calls `tool` once. Throws ProviderCallError (written for the model) when there is no result. */
  async callTool(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpToolResult> {
    const started = Date.now();
    try {
      return await this.callOnce(tool, args, options.timeoutMs, options.meta);
    } catch (error) {
      if (!(error instanceof SessionForgottenError)) throw error;
      // The server answered 404 to our session (it restarted): it did not take the request, so sending it again on a
      // new session cannot run the tool twice. Once, within the call's own timeout.
      const left = options.timeoutMs - (Date.now() - started);
      if (left <= 0) throw error.failure;
      await this.reconnectNow();
      return this.callOnce(tool, args, left, options.meta).catch((again: unknown) => {
        throw again instanceof SessionForgottenError ? again.failure : again;
      });
    }
  }

  private async callOnce(
    tool: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    meta: Record<string, unknown> | undefined,
  ): Promise<McpToolResult> {
    const options = { timeoutMs, meta };
    const client = await this.readyClient(options.timeoutMs);
    const controller = new AbortController();
    this.inFlight.add(controller);
    try {
      return (await client.callTool({ name: tool, arguments: args, _meta: options.meta }, undefined, {
        timeout: options.timeoutMs,
        maxTotalTimeout: options.timeoutMs,
        signal: controller.signal,
      })) as McpToolResult;
    } catch (error) {
      const failure = this.callFailure(client, error, options.timeoutMs, controller.signal.aborted);
      if (error instanceof StreamableHTTPError && error.code === 404)
        throw new SessionForgottenError(failure);
      throw failure;
    } finally {
      this.inFlight.delete(controller);
    }
  }

  /** Cancels calls in flight (the server is told), closes the session or stops the process, and stays closed. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    for (const controller of this.inFlight) controller.abort(new Error('the worker is stopping'));
    const client = this.client;
    const session = this.session;
    this.client = undefined;
    // An HTTP server keeps a session until told: end ours, so restarts of this worker do not pile them up there.
    await session?.terminateSession().catch(() => undefined);
    await client?.close().catch(() => undefined);
  }

  private async readyClient(timeoutMs: number): Promise<Client> {
    if (this.state === 'connecting' && this.connecting) {
      // A restart in progress (a stdio server starting again) is worth waiting for, within the call's own timeout.
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
      await Promise.race([this.connecting, waited]);
      clearTimeout(timer);
    }
    if (this.state === 'connected' && this.client) return this.client;
    const retry =
      this.state === 'waiting' ? `; next attempt in ${Math.max(0, this.retryAt - Date.now())} ms` : '';
    throw new ProviderCallError(
      `MCP server "${this.server}" is unreachable (${this.lastError}${retry}); nothing was sent to it.`,
      false,
    );
  }

  private callFailure(
    client: Client,
    error: unknown,
    timeoutMs: number,
    aborted: boolean,
  ): ProviderCallError {
    const where = `MCP server "${this.server}"`;
    if (aborted)
      return new ProviderCallError(
        `${where}: the call was cancelled because the worker is stopping; the server may or may not have run it.`,
        true,
      );
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout)
      return new ProviderCallError(
        `${where} did not answer within ${timeoutMs} ms; the call was cancelled at the server, which may or may not have run it.`,
        true,
      );
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed)
      return new ProviderCallError(`${where} refused the call: ${this.text(error)}`, true);
    // The transport failed (process died, connection refused or dropped): reconnect, and say what is known.
    this.lost(client, error);
    const refused = connectionRefused(error);
    return new ProviderCallError(
      refused
        ? `${where} is unreachable (${this.text(error)}); nothing was sent to it.`
        : `${where} failed during the call (${this.text(error)}); it may or may not have run it.`,
      !refused,
    );
  }

  /** Connects at once instead of after the backoff delay (a retry of a call is waiting on it). */
  private async reconnectNow(): Promise<void> {
    if (this.state === 'waiting') {
      clearTimeout(this.retryTimer);
      await this.connect();
    } else if (this.state === 'connecting') {
      await this.connecting;
    }
  }

  private connect(): Promise<void> {
    this.state = 'connecting';
    this.connecting = this.openClient().then(
      (client) => {
        if (this.state === 'closed') {
          void client.close().catch(() => undefined);
          return;
        }
        this.client = client;
        this.state = 'connected';
        this.connectedAt = Date.now();
        this.logger.info({ server: this.server, tools: this.tools.length }, 'MCP server connected');
      },
      (error: unknown) => {
        if (this.state === 'closed') return;
        this.lastError = this.text(error);
        this.scheduleRetry();
      },
    );
    return this.connecting;
  }

  private async openClient(): Promise<Client> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const transport = this.transport();
    const session = transport instanceof StreamableHTTPClientTransport ? transport : undefined;
    client.onclose = () => this.lost(client, new Error('the connection closed'));
    client.onerror = (error) =>
      this.logger.debug({ server: this.server, err: this.text(error) }, 'MCP client transport error');
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.logger.info({ server: this.server }, 'MCP server: tool list changed');
      void this.refresh();
    });
    const timeout = this.config.connectTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      await this.listInto(client);
      this.session = session;
      return client;
    } catch (error) {
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      throw error;
    }
  }

  private transport(): Transport {
    const config = this.config;
    if (config.transport === 'stdio') {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        // Read now: a secret is resolved when the process that needs it starts.
        env: this.secrets.values(config.env),
        cwd: config.cwd,
        stderr: 'pipe',
      });
      this.forwardStderr(transport);
      return transport;
    }
    const headers = config.headers;
    return new StreamableHTTPClientTransport(new URL(this.secrets.plain(config.url)), {
      // Secrets are read for every request, so a rotated token (a new file) is used without a restart.
      fetch: (url, init) => {
        const merged = new Headers(init?.headers);
        for (const [name, value] of Object.entries(this.secrets.values(headers))) merged.set(name, value);
        return fetch(url, { ...init, headers: merged, redirect: 'error' });
      },
      // The client reconnects the whole session itself (below); the transport's own SSE retries stay short.
      reconnectionOptions: {
        initialReconnectionDelay: 500,
        maxReconnectionDelay: 5_000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 2,
      },
    });
  }

  private forwardStderr(transport: StdioClientTransport): void {
    let pending = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline).slice(0, MAX_STDERR_LINE);
        pending = pending.slice(newline + 1);
        if (line.trim())
          this.logger.info({ server: this.server, stderr: this.secrets.scrub(line) }, 'MCP server stderr');
      }
      if (pending.length > MAX_STDERR_LINE) pending = '';
    });
  }

  private async listInto(client: Client): Promise<void> {
    const tools: AdvertisedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await client.listTools(cursor ? { cursor } : undefined, {
        timeout: this.config.connectTimeoutMs,
      });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    if (client !== this.client && this.state === 'connected') return; // a listing of a connection already replaced
    const changed = JSON.stringify(tools) !== JSON.stringify(this.tools);
    this.tools = tools;
    if (changed) for (const listener of this.listeners) listener(tools);
  }

  /** The connection `client` failed: forget it and reconnect later (unless already done, or closed). */
  private lost(client: Client, error: unknown): void {
    if (this.client !== client || this.state !== 'connected') return;
    this.client = undefined;
    this.lastError = this.text(error);
    client.onclose = undefined;
    void client.close().catch(() => undefined);
    if (Date.now() - this.connectedAt >= STABLE_AFTER_MS) this.failures = 0;
    this.logger.warn({ server: this.server, err: this.lastError }, 'MCP server connection lost');
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    const delay = backoffDelay(this.failures++, this.config.restart);
    this.state = 'waiting';
    this.retryAt = Date.now() + delay;
    this.logger.warn(
      { server: this.server, err: this.lastError, retryInMs: delay },
      this.config.transport === 'stdio'
        ? 'MCP server down; restarting it later'
        : 'MCP server unreachable; reconnecting later',
    );
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  /** An error's text as it may be shown: secrets removed. */
  private text(error: unknown): string {
    return this.secrets.scrub(error instanceof Error ? error.message : String(error));
  }
}

/** A call the server refused with 404 for an unknown session: certainly not run; `failure` is what to report. */
class SessionForgottenError extends Error {
  constructor(readonly failure: ProviderCallError) {
    super(failure.message);
    this.name = this.constructor.name;
  }
}

function connectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code === 'ECONNREFUSED';
}
