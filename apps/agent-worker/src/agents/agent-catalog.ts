// Every agent of this instance, built once at start-up (agent-builder.ts): those of AGENTS_CONFIG, and one
// `runbook.<name>` agent per runbook, whose model is the runbook interpreter. Tools of MCP servers join an agent's
// registry when the server lists them, and follow its list afterwards.
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { RegisteredTool } from '@countersign/authorization';
import { type RunbookDefinition, runbookAgentName } from '@countersign/contracts';
import { InfraStore, opsTools } from '@countersign/demo-infra';
import { ConfigError, type Logger } from '@countersign/platform';
import { loadPolicies, type PipelinePolicies } from '@countersign/policy';
import { type ProviderTool, selectProviderTools, ToolProviders } from '@countersign/tool-providers';
import type { AgentConfig, AgentsConfig } from '../config/agents-config.schema';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import { WORKER_LOGGER } from '../core/worker-logger';
import { WorkerMetrics } from '../core/worker-metrics';
import { ChatModels } from '../models/chat-models';
import { gateTool } from '../runbooks/gate-tool';
import { own } from '../runbooks/own';
import { stepAgents } from '../runbooks/runbook-agents';
import type { AgentStepRunner } from '../runbooks/runbook-interpreter';
import { RunbookLibrary } from '../runbooks/runbook-library';
import { RunbookModel } from '../runbooks/runbook-model';
import { describeStep } from '../runbooks/runbook-steps';
import { AdmissionRecorder } from './admission-recorder';
import { type AgentRuntime, buildAgent, type BuiltAgent } from './agent-builder';

/** An agent's tools that come from MCP servers: what it selected, and what is registered now. */
interface ProviderBinding extends BuiltAgent {
  registered: Map<string, ProviderTool>;
  conflicts: string;
}

@Injectable()
export class AgentCatalog {
  private readonly agents = new Map<string, AgentRuntime>();
  /** The Cedar policy sets of AGENTS_CONFIG `policy`, loaded once and shared by every agent. */
  private readonly policies: PipelinePolicies;

  constructor(
    @Inject(WORKER_CONFIG) config: Pick<WorkerConfig, 'agents'> & Partial<Pick<WorkerConfig, 'principals'>>,
    /** Each runbook is an agent `runbook.<name>` whose model is the runbook interpreter. */
    @Inject(RunbookLibrary) private readonly runbooks: RunbookLibrary,
    /** The simulated infrastructure the built-in ops tools act on. */
    @Inject(InfraStore) infra: InfraStore,
    @Inject(ToolProviders) private readonly providers: ToolProviders,
    @Inject(ChatModels) models: ChatModels,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
    /** Audits and measures admission hooks' answers. */
    @Inject(AdmissionRecorder) private readonly hooks: Pick<AdmissionRecorder, 'record'>,
    @Optional()
    @Inject(WorkerMetrics)
    metrics?: Pick<WorkerMetrics, 'policyShadowDisagreements' | 'policyShadowErrors'>,
  ) {
    try {
      this.policies = loadPolicies(
        config.agents.policy,
        config.principals?.principals ?? [],
        'AGENTS_CONFIG: policy',
        {
          warn: (fields, message) => logger.warn(fields, message),
          disagreements: metrics?.policyShadowDisagreements ?? { inc: () => {} },
          errors: metrics?.policyShadowErrors ?? { inc: () => {} },
        },
      );
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
    for (const [name, agent] of Object.entries(config.agents.agents)) {
      const built = buildAgent(
        name,
        agent,
        opsTools(infra, agent.infra),
        providers,
        models.forAgent(agent),
        (e) => this.hooks.record(e),
        { policies: this.policies },
      );
      this.add(built);
    }
    for (const name of this.runbooks.names()) this.addRunbook(this.runbooks.get(name)!, config.agents, infra);
  }

  private add(built: BuiltAgent): void {
    this.agents.set(built.runtime.name, built.runtime);
    if (built.selections.length > 0)
      this.bindProviderTools({ ...built, registered: new Map(), conflicts: '' });
  }

  /**
   * The runbook's agent: the tools, tiers, confirmation policy and roles of the agent it names, joined by those of the
   * agents its agent steps use (the stricter policy wins: a tool any of them confirms is confirmed), plus the gate tool.
   */
  private addRunbook(definition: RunbookDefinition, config: AgentsConfig, infra: InfraStore): void {
    // Agents and tool steps were checked against AGENTS_CONFIG before start-up (checkRunbookAgents).
    const used = [definition.agent, ...stepAgents(definition, this.runbooks)];
    const base = own(config.agents, definition.agent)!;
    const others = used.slice(1).map((agent) => own(config.agents, agent)!);
    const joined: AgentConfig = {
      ...base,
      description: definition.description,
      tools: dedupe([...base.tools, ...others.flatMap((a) => a.tools), gateTool().name]),
      confirmation: {
        require: dedupe([...base.confirmation.require, ...others.flatMap((a) => a.confirmation.require)]),
        requireForAll: [base, ...others].some((a) => a.confirmation.requireForAll),
      },
      // Every transition is a turn of the run loop: room for the largest graphs.
      maxTurns: 200,
    };
    const builtIns = [...opsTools(infra, base.infra), gateTool()];
    const lookup = (name: string) => this.runbooks.get(name);
    const model = new RunbookModel(definition, lookup, this.agentSteps());
    const built = buildAgent(
      runbookAgentName(definition.name),
      joined,
      builtIns,
      this.providers,
      { model },
      (e) => this.hooks.record(e),
      { policies: this.policies },
    );
    built.runtime.describeStep = (callId) => describeStep(definition, lookup, callId);
    this.add(built);
  }

  /** How agent steps reach their agents' models and tools. */
  private agentSteps(): AgentStepRunner {
    return {
      tools: (agent) =>
        this.agents.get(agent)?.model ? this.agents.get(agent)!.registry.toModelTools() : undefined,
      next: (agent, messages, tools) => {
        const runtime = this.agents.get(agent)!;
        return runtime.model!.next({ systemPrompt: runtime.config.systemPrompt, messages, tools });
      },
    };
  }

  get(name: string): AgentRuntime | undefined {
    return this.agents.get(name);
  }

  names(): string[] {
    return [...this.agents.keys()];
  }

  /** Every agent's tools as registered (one entry per agent and tool). */
  registeredTools(): RegisteredTool[] {
    return [...this.agents.values()].flatMap((agent) =>
      agent.registry.names().map((name) => agent.registry.get(name)!),
    );
  }

  /** Registers the selected servers' tools now, and again whenever one of those servers' lists changes. */
  private bindProviderTools(binding: ProviderBinding): void {
    const servers = binding.selections.map((s) => this.providers.server(s.server)!);
    for (const server of servers) server.onChange(() => this.syncProviderTools(binding));
    binding.runtime.refreshTool = async (toolName) => {
      const owners = servers.filter((s) => toolName.startsWith(s.prefix));
      await Promise.all(owners.map((s) => s.refresh()));
    };
    this.syncProviderTools(binding);
  }

  /** Brings the agent's registry in line with its servers' current tools (synchronously: no call sees half of it). */
  private syncProviderTools(binding: ProviderBinding): void {
    const { runtime, registered } = binding;
    const { tools, conflicts } = selectProviderTools(this.providers, binding.selections, binding.taken);
    const next = new Map(tools.map((tool) => [tool.definition.name, tool]));
    for (const [name, tool] of registered) {
      if (next.get(name)?.definition === tool.definition) continue;
      runtime.registry.unregister(name);
      registered.delete(name);
    }
    for (const [name, tool] of next) {
      if (registered.has(name)) continue;
      runtime.registry.register(tool.definition);
      registered.set(name, tool);
    }
    const described = JSON.stringify(conflicts);
    if (conflicts.length > 0 && described !== binding.conflicts)
      this.logger.error(
        { agent: runtime.name, conflicts },
        'tools offered under one name by more than one source are offered by none of them',
      );
    binding.conflicts = described;
  }
}

function dedupe<T>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
