// One MCP server as a source of tools for the policy pipeline: each advertised tool becomes a ToolDefinition named
// `<prefix><tool>`, tiered by Countersign's patterns (hints only raise), its arguments checked against the advertised
// JSON schema, its definition hash covering what was advertised, its handler a bounded call whose result is text.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { CallerContext, ToolDefinition } from '@countersign/authorization';
import { ToolNameSchema } from '@countersign/contracts';
import { jsonSchemaArgs } from './json-schema-args';
import {
  type CallOptions,
  type ConnectionState,
  McpConnection,
  ProviderCallError,
  type ProviderLogger,
} from './mcp-connection';
import { NamePatterns } from './name-patterns';
import {
  type McpPreview,
  type McpReadCall,
  resultScope,
  templateArgs,
  templatePreview,
} from './preview-template';
import type { McpPrecondition, McpServerConfig } from './provider-config.schema';
import { capText, type McpToolResult, mcpResultText } from './result-text';
import type { SecretSource } from './secrets';
import { TierRules } from './tier-rules';

/** A tool some provider offers, ready for a ToolRegistry. */
export interface ProviderTool {
  definition: ToolDefinition;
  /** `mcp:<server>` or `http`: for logs and conflicts. */
  source: string;
  /** The provider's own name of the tool (the server's, without the prefix). */
  remoteName: string;
  /** What the server listed for it, every field (output schema, icons, ...): a gateway lists it again. */
  listed: Tool;
}

/** A tool that reported failure (`isError`): it ran, and its text says what went wrong. */
export class ToolReportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

export interface ProviderDeps {
  secrets: SecretSource;
  logger: ProviderLogger;
}

/** The `_meta` keys a call carries, so a server can log and deduplicate by the call it serves. */
export const CALL_META = {
  runId: 'countersign/runId',
  callId: 'countersign/callId',
  agent: 'countersign/agent',
  userId: 'countersign/userId',
} as const;

export class McpToolProvider {
  readonly prefix: string;
  private readonly connection: McpConnection;
  private readonly tiers: TierRules;
  private readonly timeouts: NamePatterns<number>;
  private readonly previews: NamePatterns<McpPreview>;
  private readonly preconditions: NamePatterns<McpPrecondition>;
  private current: readonly ProviderTool[] = [];
  private readonly listeners = new Set<(tools: readonly ProviderTool[]) => void>();

  constructor(
    readonly server: string,
    private readonly config: McpServerConfig,
    private readonly deps: ProviderDeps,
  ) {
    this.prefix = config.prefix ?? `${server}__`;
    this.tiers = new TierRules(config.tiers);
    // Two equally specific timeout patterns: the shorter one.
    this.timeouts = new NamePatterns(config.toolTimeoutMs, (a, b) => b - a);
    // Two equally specific preview patterns: the longer template (it says more).
    this.previews = new NamePatterns<McpPreview>(
      config.previews,
      (a, b) => JSON.stringify(a).length - JSON.stringify(b).length,
    );
    // Two equally specific precondition patterns: the longer declaration.
    this.preconditions = new NamePatterns<McpPrecondition>(
      config.preconditions,
      (a, b) => JSON.stringify(a).length - JSON.stringify(b).length,
    );
    this.connection = new McpConnection(server, config, deps.secrets, deps.logger);
    this.connection.onToolsChanged((advertised) => this.rebuild(advertised));
  }

  /** Connects and lists the tools (bounded by `connectTimeoutMs`); on failure keeps trying in the background. */
  start(): Promise<void> {
    return this.connection.start();
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** Lists the server's tools again now, e.g. before running a call approved a while ago. Never throws. */
  refresh(): Promise<void> {
    return this.connection.refresh();
  }

  get status(): { state: ConnectionState; lastError?: string; tools: number } {
    return this.connection.status;
  }

  tools(): readonly ProviderTool[] {
    return this.current;
  }

  /** Called with the tools whenever the server's list changed. Returns the unsubscribe function. */
  onChange(listener: (tools: readonly ProviderTool[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls one of the server's tools (by its own name) and returns the server's answer as it came, for a gateway that
   * relays it: not converted to text, not cut, not scrubbed. Bounded by the tool's timeout, cancelled at the server when
   * `signal` aborts. Throws ProviderCallError when there is no answer (its `cause` holds the server's McpError, if any).
   */
  relay(
    remoteName: string,
    args: Record<string, unknown>,
    options: Pick<CallOptions, 'meta' | 'signal' | 'onprogress'> = {},
  ): Promise<McpToolResult> {
    return this.connection.callTool(remoteName, args, { ...options, timeoutMs: this.timeoutOf(remoteName) });
  }

  /**
   * The server's tool `remoteName` as the config alone defines it, without asking the server: its tier by the config's
   * patterns (the server's hints, which may only raise it, are not known), any arguments, and a handler that refuses to
   * run. For evaluating policy offline (`countersign policy test`); never registered for an agent that runs.
   */
  configuredDefinition(remoteName: string): ToolDefinition {
    return {
      name: `${this.prefix}${remoteName}`,
      description: `${remoteName} of MCP server ${this.server} (not listed: evaluated from the config)`,
      args: jsonSchemaArgs({ type: 'object' }),
      inputSchema: { type: 'object' },
      tier: this.tiers.tierOf(remoteName),
      handler: () => {
        throw new Error(`${remoteName} of MCP server ${this.server} is evaluated offline and cannot run`);
      },
    };
  }

  /** How long a call of the server's tool `remoteName` may take (`toolTimeoutMs`, else `timeoutMs`). */
  timeoutOf(remoteName: string): number {
    return this.timeouts.match(remoteName)?.value ?? this.config.timeoutMs;
  }

  private rebuild(advertised: readonly Tool[]): void {
    this.current = advertised.flatMap((tool) => this.toProviderTool(tool) ?? []);
    this.deps.logger.info(
      { server: this.server, tools: this.current.map((t) => `${t.definition.name}:${t.definition.tier}`) },
      'MCP server tools',
    );
    for (const listener of this.listeners) listener(this.current);
  }

  /** Undefined (and a warning) for a tool that cannot be offered safely. */
  private toProviderTool(tool: Tool): ProviderTool | undefined {
    const name = `${this.prefix}${tool.name}`;
    const refuse = (why: string) => {
      this.deps.logger.warn({ server: this.server, tool: tool.name }, `MCP tool not offered: ${why}`);
      return undefined;
    };
    if (!ToolNameSchema.safeParse(name).success)
      return refuse(`"${name}" is not a valid tool name (letters, digits, _ and -, at most 64)`);
    let args;
    try {
      args = jsonSchemaArgs(tool.inputSchema as Record<string, unknown>);
    } catch (error) {
      return refuse((error as Error).message);
    }
    const advertised: Record<string, unknown> = { name: tool.name };
    if (tool.title !== undefined) advertised.title = tool.title;
    if (tool.description !== undefined) advertised.description = tool.description;
    const timeoutMs = this.timeoutOf(tool.name);
    const preview = this.previews.match(tool.name)?.value;
    const precondition = this.preconditions.match(tool.name)?.value;
    const definition: ToolDefinition = {
      name,
      description: tool.description ?? tool.title ?? '',
      args,
      inputSchema: tool.inputSchema as Record<string, unknown>,
      advertised,
      tier: this.tiers.tierOf(tool.name, tool.annotations ?? {}),
      ...(preview ? { preview: this.previewOf(preview) } : {}),
      ...(precondition ? { precondition: this.preconditionOf(precondition) } : {}),
      handler: (callArgs, ctx) =>
        this.call(tool.name, callArgs as Record<string, unknown>, timeoutMs, {
          [CALL_META.runId]: ctx.runId,
          [CALL_META.callId]: ctx.callId,
          [CALL_META.agent]: ctx.agent,
          [CALL_META.userId]: ctx.userId,
        }),
    };
    return { definition, source: `mcp:${this.server}`, remoteName: tool.name, listed: tool };
  }

  /**
   * A configured preview: a template, or a read call first. The read call must be one of this server's `auto` tools as
   * listed now (a tool that may change something never runs for a preview); otherwise it throws, which shows no preview.
   */
  private previewOf(preview: McpPreview): NonNullable<ToolDefinition['preview']> {
    if (typeof preview === 'string') return templatePreview(preview);
    const text = templatePreview(preview.text);
    return async (args, ctx) => {
      const answer = await this.readCall('preview', preview.call, args, ctx);
      return text({ ...(args as Record<string, unknown>), result: resultScope(answer) });
    };
  }

  /** A configured precondition: the same read call as a preview's, its answer (JSON, else text) the value. */
  private preconditionOf(precondition: McpPrecondition): NonNullable<ToolDefinition['precondition']> {
    return {
      timeoutMs: precondition.timeoutMs,
      check: async (args, ctx) =>
        resultScope(await this.readCall('precondition', precondition.call, args, ctx)),
    };
  }

  /**
   * A read-only call for a preview or a precondition: one of this server's `auto` tools as listed now (a tool that
   * may change something never runs for them), its arguments templates over the call's. Throws otherwise.
   */
  private readCall(
    purpose: 'preview' | 'precondition',
    call: McpReadCall,
    args: unknown,
    ctx: CallerContext & { callId: string },
  ): Promise<string> {
    const read = this.current.find((t) => t.remoteName === call.tool);
    if (read?.definition.tier !== 'auto')
      return Promise.reject(new Error(`${purpose}: ${call.tool} is not an auto tool of ${this.server}`));
    return this.call(call.tool, templateArgs(call.args, args), this.timeoutOf(call.tool), {
      [CALL_META.runId]: ctx.runId,
      [CALL_META.callId]: ctx.callId,
      [CALL_META.agent]: ctx.agent,
      [CALL_META.userId]: ctx.userId,
    });
  }

  /** The result as the model reads it; throws (with a message for the model) when the call failed. */
  private async call(
    tool: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    meta: Record<string, unknown>,
  ): Promise<string> {
    const { secrets } = this.deps;
    const result = await this.connection.callTool(tool, args, { timeoutMs, meta });
    // Scrubbed before it is cut, so no part of a secret survives at the cut.
    const text = capText(secrets.scrub(mcpResultText(result)), this.config.maxResultBytes);
    if (result.isError) throw new ToolReportedError(text || 'the tool reported an error without details');
    return text;
  }
}

export { ProviderCallError };
