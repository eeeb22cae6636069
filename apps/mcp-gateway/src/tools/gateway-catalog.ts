// The tools the gateway serves: every configured server's tools (from libs/tool-providers: names, tiers by pattern,
// hints that only raise, ajv-checked arguments), in one registry behind one policy pipeline (RBAC, confirmation
// policy), followed as the servers' lists change. A name two servers offer is offered by neither.
import { Inject, Injectable } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  AccessControl,
  ConfirmationPolicy,
  ToolCallPipeline,
  ToolRegistry,
  type RegisteredTool,
} from '@countersign/authorization';
import type { Tier } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import {
  type McpToolProvider,
  type ProviderTool,
  selectProviderTools,
  ToolProviders,
} from '@countersign/tool-providers';
import { GATEWAY_SETTINGS, type GatewaySettings } from '../config/gateway-settings';
import { LOGGER } from '../core/gateway-tokens';

/** One served tool: the pipeline's view of it, and where a call goes. */
export interface GatewayTool {
  name: string;
  server: McpToolProvider;
  provided: ProviderTool;
}

@Injectable()
export class GatewayCatalog {
  readonly pipeline: ToolCallPipeline;
  private readonly registry = new ToolRegistry();
  private readonly access = new AccessControl();
  private readonly policy = new ConfirmationPolicy();
  private readonly registered = new Map<string, GatewayTool>();
  private readonly listeners = new Set<() => void>();
  private conflicts = '';
  private readonly tasksOffered: boolean;

  constructor(
    private readonly providers: ToolProviders,
    @Inject(GATEWAY_SETTINGS) { config }: GatewaySettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.tasksOffered = config.tasks.enabled;
    for (const [role, permissions] of Object.entries(config.roles)) this.access.defineRole(role, permissions);
    for (const [user, roles] of Object.entries(config.users)) this.access.assign(user, ...roles);
    this.policy.requireConfirmation(...config.confirmation.require);
    if (config.confirmation.requireForAll) this.policy.requireConfirmationForAll();
    this.pipeline = new ToolCallPipeline({
      registry: this.registry,
      accessControl: this.access,
      policy: this.policy,
    });
    for (const name of providers.serverNames()) providers.server(name)!.onChange(() => this.sync());
    this.sync();
  }

  /** Called after the served tools changed (sessions are told: `notifications/tools/list_changed`). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  tool(name: string): GatewayTool | undefined {
    return this.registered.get(name);
  }

  /** The registry's entry (definition hash included) of a served tool. */
  registeredTool(name: string): RegisteredTool | undefined {
    return this.registry.get(name);
  }

  /** The tier a call of `name` gets (the confirmation policy applied): what the listing says about tasks. */
  tierOf(name: string): Tier | undefined {
    const tool = this.registry.get(name);
    return tool && this.policy.effectiveTier(name, tool.tier);
  }

  /**
   * The tools `principal` may call, as their servers listed them under the gateway's names. Only confirm-tier tools
   * say they take tasks (auto ones answer at once; manual-only ones never run). A tool RBAC refuses is not listed.
   */
  listFor(principal: string): Tool[] {
    const tools: Tool[] = [];
    for (const [name, tool] of this.registered) {
      if (!this.access.check(principal, name).allowed) continue;
      const { execution: _downstreamTasks, ...listed } = tool.provided.listed;
      const tier = this.tierOf(name);
      tools.push({
        ...listed,
        name,
        ...(tier === 'confirm' && this.tasksOffered ? { execution: { taskSupport: 'optional' } } : {}),
      });
    }
    return tools;
  }

  /** Lists `name`'s server's tools again (a change it did not announce is seen before an approved call runs). */
  async refresh(name: string): Promise<void> {
    await this.registered.get(name)?.server.refresh();
  }

  /** Brings the registry in line with the servers' current tools, synchronously: no call sees half of it. */
  private sync(): void {
    const selections = this.providers.serverNames().map((server) => ({ server }));
    const { tools, conflicts } = selectProviderTools(this.providers, selections, new Set());
    const next = new Map(tools.map((tool) => [tool.definition.name, tool]));
    let changed = false;
    for (const [name, tool] of this.registered) {
      if (next.get(name)?.definition === tool.provided.definition) continue;
      this.registry.unregister(name);
      this.registered.delete(name);
      changed = true;
    }
    for (const [name, provided] of next) {
      if (this.registered.has(name)) continue;
      this.registry.register(provided.definition);
      const server = this.providers.server(provided.source.replace(/^mcp:/, ''))!;
      this.registered.set(name, { name, server, provided });
      changed = true;
    }
    const described = JSON.stringify(conflicts);
    if (conflicts.length > 0 && described !== this.conflicts)
      this.logger.error(
        { conflicts },
        'tools offered under one name by more than one server are offered by none of them',
      );
    this.conflicts = described;
    if (changed) for (const listener of this.listeners) listener();
  }
}
