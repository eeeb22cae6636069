// Every configured tool provider of a service, behind one small interface: the agent worker builds its agents' tools
// from it, and a gateway can serve the same tools. MCP servers are connected at `start()` and followed afterwards;
// HTTP tools are built once.
import type { ToolDefinition } from '@countersign/authorization';
import { httpTool, InvalidToolConfigError } from './http-tool';
import type { ProviderLogger } from './mcp-connection';
import { McpToolProvider, type ProviderTool } from './mcp-tool-provider';
import { matchesAny } from './name-patterns';
import type { McpServerConfig, ToolProvidersConfig } from './provider-config.schema';
import { type ConfigValue, MissingSecretError, type PlainValue, type SecretSource } from './secrets';

/** Which of one server's tools a consumer (an agent) takes: all, or those whose own names match `only`. */
export interface ServerSelection {
  server: string;
  only?: readonly string[];
}

export interface ToolConflict {
  name: string;
  sources: string[];
}

export class ToolProviders {
  private readonly servers = new Map<string, McpToolProvider>();
  private readonly http = new Map<string, ToolDefinition>();

  /** Throws InvalidToolConfigError naming the tool (an HTTP tool's URL template or schema is unusable). */
  constructor(
    config: ToolProvidersConfig,
    private readonly deps: { secrets: SecretSource; logger: ProviderLogger },
  ) {
    for (const [name, server] of Object.entries(config.mcpServers)) {
      if (server.transport === 'http') checkUrl(`mcpServers.${name}.url`, server.url, deps.secrets);
      this.servers.set(name, new McpToolProvider(name, server, deps));
    }
    for (const [name, tool] of Object.entries(config.httpTools)) {
      try {
        this.http.set(name, httpTool(name, tool, deps));
      } catch (error) {
        throw new InvalidToolConfigError(`httpTools.${name}.${(error as Error).message}`);
      }
    }
    const missing = deps.secrets.missing(secretRefs(config));
    if (missing.length > 0)
      deps.logger.warn(
        { secrets: [...new Set(missing)] },
        'tool providers: secrets not set now; calls that need them fail until they are',
      );
  }

  /** Connects every MCP server at once; resolves when each is connected or has used its `connectTimeoutMs`. */
  async start(): Promise<void> {
    await Promise.all([...this.servers.values()].map((s) => s.start()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.servers.values()].map((s) => s.close()));
  }

  /** The secret in the named variable (or in the file `<name>_FILE` names); undefined when unset. */
  secret(name: string): string | undefined {
    try {
      return this.deps.secrets.secret({ $secret: name });
    } catch (error) {
      if (error instanceof MissingSecretError) return undefined;
      throw error;
    }
  }

  server(name: string): McpToolProvider | undefined {
    return this.servers.get(name);
  }

  serverNames(): string[] {
    return [...this.servers.keys()];
  }

  httpTool(name: string): ToolDefinition | undefined {
    return this.http.get(name);
  }

  httpToolNames(): string[] {
    return [...this.http.keys()];
  }

  /** The server whose tools may carry `toolName` (by prefix), for a refresh before an approved call runs. */
  serversFor(toolName: string): McpToolProvider[] {
    return [...this.servers.values()].filter((s) => toolName.startsWith(s.prefix));
  }
}

/**
 * The provider tools a consumer gets from `selections`, given the names it already has (`taken`: tools declared in
 * code, HTTP tools). A name two sources claim is given to neither and reported: which tool a call would reach must
 * never depend on which server answered first.
 */
export function selectProviderTools(
  providers: ToolProviders,
  selections: readonly ServerSelection[],
  taken: ReadonlySet<string>,
): { tools: ProviderTool[]; conflicts: ToolConflict[] } {
  const byName = new Map<string, ProviderTool[]>();
  for (const selection of selections) {
    const server = providers.server(selection.server);
    for (const tool of server?.tools() ?? []) {
      if (selection.only && !matchesAny(tool.remoteName, selection.only)) continue;
      byName.set(tool.definition.name, [...(byName.get(tool.definition.name) ?? []), tool]);
    }
  }
  const tools: ProviderTool[] = [];
  const conflicts: ToolConflict[] = [];
  for (const [name, claimants] of byName) {
    if (claimants.length === 1 && !taken.has(name)) tools.push(claimants[0]);
    else
      conflicts.push({
        name,
        sources: [...(taken.has(name) ? ['configured tool'] : []), ...claimants.map((c) => c.source)],
      });
  }
  return { tools, conflicts };
}

function* secretRefs(config: ToolProvidersConfig): Iterable<ConfigValue> {
  for (const server of Object.values(config.mcpServers) as McpServerConfig[])
    yield* Object.values(server.transport === 'stdio' ? server.env : server.headers);
  for (const tool of Object.values(config.httpTools)) yield* Object.values(tool.headers);
}

/** A server's URL must be readable and an http(s) URL at start, not at its first connection attempt. */
function checkUrl(where: string, url: PlainValue, secrets: SecretSource): void {
  let value: string;
  try {
    value = secrets.plain(url);
  } catch (error) {
    throw new InvalidToolConfigError(`${where}: ${(error as Error).message}`);
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new InvalidToolConfigError(`${where}: "${value}" is not an http(s) URL`);
}
