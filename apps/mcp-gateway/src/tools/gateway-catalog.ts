// The tools the gateway serves: every configured server's tools (from libs/tool-providers: names, tiers by pattern,
// hints that only raise, ajv-checked arguments), in one registry behind one policy pipeline (RBAC or Cedar, admission
// hooks, confirmation policy and handler), followed as the servers' lists change. A name two servers offer is offered by neither.
import { Inject, Injectable } from '@nestjs/common';
import { type CallToolResult, CallToolResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  admissionPlugins,
  type BuiltHandler,
  confirmationHandler,
  type HookEvent,
} from '@countersign/admission';
import { AuditLog } from '@countersign/audit';
import {
  AccessControl,
  ConfirmationPolicy,
  ToolCallPipeline,
  ToolRegistry,
  type CallerContext,
  type ReadyCall,
  type RegisteredTool,
  toContent,
} from '@countersign/authorization';
import type { Tier } from '@countersign/contracts';
import { ConfigError, type Logger } from '@countersign/platform';
import { loadPolicies, type PipelinePolicies } from '@countersign/policy';
import {
  type McpToolProvider,
  type ProviderTool,
  selectProviderTools,
  ToolProviders,
} from '@countersign/tool-providers';
import { GATEWAY_SETTINGS, type GatewaySettings } from '../config/gateway-settings';
import { GatewayMetrics } from '../core/gateway-metrics';
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
  /** GATEWAY_CONFIG `policy`: a Cedar set in RBAC's place, and a shadow set compared beside the active rules. */
  private readonly policies: PipelinePolicies;

  constructor(
    private readonly providers: ToolProviders,
    @Inject(GATEWAY_SETTINGS) { config, principals }: GatewaySettings,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly audit: AuditLog,
    private readonly metrics: GatewayMetrics,
  ) {
    this.tasksOffered = config.tasks.enabled;
    for (const [role, permissions] of Object.entries(config.roles)) this.access.defineRole(role, permissions);
    for (const [user, roles] of Object.entries(config.users)) this.access.assign(user, ...roles);
    this.policy.requireConfirmation(...config.confirmation.require);
    if (config.confirmation.requireForAll) this.policy.requireConfirmationForAll();
    try {
      this.policies = loadPolicies(config.policy, principals.principals, 'GATEWAY_CONFIG: policy', {
        warn: (fields, message) => logger.warn(fields, message),
        disagreements: metrics.policyShadowDisagreements,
        errors: metrics.policyShadowErrors,
      });
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
    let plugins;
    let handler: BuiltHandler | undefined;
    const secretOf = (variable: string) => providers.secret(variable);
    try {
      plugins = admissionPlugins(config.admission, {
        where: 'GATEWAY_CONFIG: admission',
        secretOf,
        observe: (event) => this.recordHook(event),
      });
      // As an agent's (the worker's agent-builder): rules' `when.env` read from the gateway's environment.
      if (config.confirmationHandler)
        handler = confirmationHandler(config.confirmationHandler, {
          where: 'GATEWAY_CONFIG: confirmationHandler',
          secretOf,
          envOf: secretOf,
          observe: (event) => this.recordHook(event),
        });
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
    this.pipeline = new ToolCallPipeline({
      registry: this.registry,
      accessControl: this.access,
      policy: this.policy,
      ...this.policies,
      plugins,
      ...(handler ? { confirmationHandler: handler.handler, confirmationTimeoutMs: handler.timeoutMs } : {}),
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
      // A Cedar set decides per call (it reads the arguments): every tool is listed and each call is asked.
      if (!this.policies.callPolicy && !this.access.check(principal, name).allowed) continue;
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

  /**
   * A relayed call's result after the admission after-hooks (the gateway runs calls itself, not through the
   * pipeline): kept, or replaced; a replacement that is no MCP tool result is sent as its text.
   */
  async afterTool(
    call: Pick<ReadyCall, 'callId' | 'toolName' | 'args' | 'tier'>,
    ctx: CallerContext,
    result: CallToolResult,
  ): Promise<CallToolResult> {
    const after = await this.pipeline.afterCallbacks(call, ctx, result);
    if (after === result) return result;
    const parsed = CallToolResultSchema.safeParse(after);
    return parsed.success ? parsed.data : { content: [{ type: 'text', text: toContent(after) }] };
  }

  /** An admission hook's answer or failure, audited and measured (its latency); a failed append is logged. */
  private async recordHook(event: HookEvent): Promise<void> {
    this.metrics.admissionHookSeconds.observe(
      { hook: event.hook, stage: event.stage, outcome: event.outcome },
      event.ms / 1000,
    );
    const { answer, ...rest } = event;
    const { result: _replaced, ...audited } = (answer ?? {}) as Record<string, unknown>;
    try {
      await this.audit.append({
        type: event.outcome === 'failed' ? 'admission.failed' : 'admission.answered',
        runId: event.runId,
        callId: event.callId,
        actor: `hook:${event.hook}`,
        detail: { ...rest, ...(answer ? { answer: audited } : {}), via: 'mcp-gateway' },
      });
    } catch (error) {
      this.logger.error({ ...rest, err: (error as Error).message }, 'admission audit append failed');
    }
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
