// Builds, once at start-up, each configured agent: its tool registry, RBAC, confirmation policy,
// pipeline and model. A config that names an unknown tool, server or role, or lowers a tier, refuses to start.
// Tools of MCP servers join an agent's registry when the server lists them, and follow its list afterwards.
import {
  AccessControl,
  ConfirmationPolicy,
  ToolCallPipeline,
  ToolRegistry,
  type RegisteredTool,
  type ToolDefinition,
} from '@countersign/authorization';
import { type RunbookDefinition, runbookAgentName, type Tier } from '@countersign/contracts';
import { type InfraStore, opsTools } from '@countersign/demo-infra';
import { ConfigError, createLogger, type Logger } from '@countersign/platform';
import {
  type ProviderTool,
  SecretSource,
  selectProviderTools,
  type ServerSelection,
  ToolProviders,
} from '@countersign/tool-providers';
import type { AgentConfig, AgentsConfig } from '../config/agents-config.schema';
import type { AgentWorkerConfig } from '../config/worker-config';
import type { ChatModel } from '../models/chat-model';
import { OpenAiModel } from '../models/openai-model';
import { ScriptedModel } from '../models/scripted-model';
import { gateTool } from '../runbooks/gate-tool';
import { own } from '../runbooks/own';
import type { AgentStepRunner } from '../runbooks/runbook-interpreter';
import type { RunbookLibrary } from '../runbooks/runbook-library';
import { RunbookModel } from '../runbooks/runbook-model';
import { describeStep } from '../runbooks/runbook-steps';

export interface AgentRuntime {
  name: string;
  config: AgentConfig;
  pipeline: ToolCallPipeline;
  registry: ToolRegistry;
  /** Undefined when the agent cannot run (e.g. no API key); `unavailable` says why. */
  model?: ChatModel;
  unavailable?: string;
  /**
   * Before an approved call runs: lists the tool's provider's tools again, so a tool changed since the approval is
   * seen (its definition hash differs) and asked about again. Absent when the agent has no provider tools.
   */
  refreshTool?: (toolName: string) => Promise<void>;
  /** Runbook agents: which runbook and step a call comes from (`step 3 of 7 of payments-failover`), for approvers. */
  describeStep?: (callId: string) => string | undefined;
}

/** An agent's tools that come from MCP servers: what it selected, and what is registered now. */
interface ProviderBinding {
  runtime: AgentRuntime;
  selections: ServerSelection[];
  /** Names of the agent's other tools (built in, HTTP): a server cannot take them. */
  taken: ReadonlySet<string>;
  registered: Map<string, ProviderTool>;
  conflicts: string;
}

const TIER_RANK: Record<Tier, number> = { auto: 0, confirm: 1, manual_only: 2 };

export class AgentCatalog {
  private readonly agents = new Map<string, AgentRuntime>();

  constructor(
    config: AgentsConfig,
    env: AgentWorkerConfig,
    infra: InfraStore,
    private readonly providers: ToolProviders = noProviders(),
    private readonly logger: Logger = createLogger('agent-worker', 'silent'),
    /** Each runbook becomes an agent `runbook.<name>` whose model is the runbook interpreter. */
    readonly runbooks?: RunbookLibrary,
  ) {
    for (const [name, agent] of Object.entries(config.agents)) {
      const builtIns = opsTools(infra, agent.infra);
      const { runtime, selections, taken } = buildAgent(name, agent, env, builtIns, providers);
      this.agents.set(name, runtime);
      if (selections.length > 0)
        this.bindProviderTools({ runtime, selections, taken, registered: new Map(), conflicts: '' });
    }
    for (const name of runbooks?.names() ?? []) this.addRunbook(runbooks!.get(name)!, config, env, infra);
  }

  /**
   * The runbook's agent: the tools, tiers, confirmation policy and roles of the agent it names, joined by those of the
   * agents its agent steps use (the stricter policy wins: a tool any of them confirms is confirmed), plus the gate tool.
   */
  private addRunbook(
    definition: RunbookDefinition,
    config: AgentsConfig,
    env: AgentWorkerConfig,
    infra: InfraStore,
  ): void {
    // Agents and tool steps were checked against AGENTS_CONFIG before start-up (checkRunbookAgents).
    const used = [definition.agent, ...stepAgents(definition, this.runbooks!)];
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
    const { runtime, selections, taken } = buildAgent(
      runbookAgentName(definition.name),
      joined,
      env,
      builtIns,
      this.providers,
    );
    const lookup = (name: string) => this.runbooks!.get(name);
    runtime.model = new RunbookModel(definition, lookup, this.agentSteps());
    runtime.describeStep = (callId) => describeStep(definition, lookup, callId);
    delete runtime.unavailable;
    this.agents.set(runtime.name, runtime);
    if (selections.length > 0)
      this.bindProviderTools({ runtime, selections, taken, registered: new Map(), conflicts: '' });
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

/** The agents of a runbook's agent steps, its sub-runbooks' included. */
export function stepAgents(
  definition: RunbookDefinition,
  library: RunbookLibrary,
  seen = new Set<string>(),
): string[] {
  if (seen.has(definition.name)) return [];
  seen.add(definition.name);
  return Object.values(definition.nodes).flatMap((node) => {
    if (node.kind === 'agent') return [node.agent];
    const sub = node.kind === 'runbook' ? library.get(node.runbook) : undefined;
    return sub ? [sub.agent, ...stepAgents(sub, library, seen)] : [];
  });
}

/** The tool steps of a runbook and its sub-runbooks, with the node that names each. */
function toolSteps(
  definition: RunbookDefinition,
  library: RunbookLibrary,
  seen = new Set<string>(),
): { node: string; tool: string }[] {
  if (seen.has(definition.name)) return [];
  seen.add(definition.name);
  return Object.entries(definition.nodes).flatMap(([id, node]) => {
    if (node.kind === 'tool') return [{ node: id, tool: node.tool }];
    const sub = node.kind === 'runbook' ? library.get(node.runbook) : undefined;
    return sub ? toolSteps(sub, library, seen) : [];
  });
}

/**
 * Before anything starts: every agent a runbook names is in AGENTS_CONFIG, and every tool step names a tool of the
 * runbook's agent (tools of an agent's MCP servers are listed only once the server answers: not checked here).
 */
export function checkRunbookAgents(config: AgentsConfig, library: RunbookLibrary): void {
  for (const name of library.names()) {
    const definition = library.get(name)!;
    const where = `runbook ${name}`;
    const used = [definition.agent, ...stepAgents(definition, library)];
    const missing = used.find((agent) => !own(config.agents, agent));
    if (missing)
      throw new ConfigError(
        `${where}: agent "${missing}" is not in AGENTS_CONFIG (known: ${Object.keys(config.agents).join(', ')})`,
      );
    // The runbook's registry joins the tools of every agent it uses (see addRunbook).
    const entries = used.flatMap((agent) => own(config.agents, agent)!.tools);
    if (entries.some((entry) => typeof entry !== 'string' && 'server' in entry)) continue;
    const tools = new Set(
      entries.map((entry) => (typeof entry === 'string' ? entry : (entry as { name: string }).name)),
    );
    const unknown = toolSteps(definition, library).find((step) => !tools.has(step.tool));
    if (unknown)
      throw new ConfigError(
        `${where}: node "${unknown.node}": field "tool": "${unknown.tool}" is not a tool of agent ${used.map((a) => `"${a}"`).join(' or ')}`,
      );
  }
}

function noProviders(): ToolProviders {
  return new ToolProviders(
    { mcpServers: {}, httpTools: {} },
    { secrets: new SecretSource({}), logger: createLogger('agent-worker', 'silent') },
  );
}

function buildAgent(
  name: string,
  agent: AgentConfig,
  env: AgentWorkerConfig,
  builtIns: ToolDefinition[],
  providers: ToolProviders,
): { runtime: AgentRuntime; selections: ServerSelection[]; taken: ReadonlySet<string> } {
  const where = `AGENTS_CONFIG: agents.${name}`;
  const registry = new ToolRegistry();
  const selections: ServerSelection[] = [];
  const known = [...builtIns.map((t) => t.name), ...providers.httpToolNames()];
  for (const entry of agent.tools) {
    if (typeof entry !== 'string' && 'server' in entry) {
      if (!providers.server(entry.server))
        throw new ConfigError(
          `${where}.tools: unknown MCP server "${entry.server}" (declared: ${providers.serverNames().join(', ') || 'none'})`,
        );
      selections.push(entry);
      continue;
    }
    const wanted: { name: string; tier?: Tier } = typeof entry === 'string' ? { name: entry } : entry;
    const tool = builtIns.find((t) => t.name === wanted.name) ?? providers.httpTool(wanted.name);
    if (!tool)
      throw new ConfigError(`${where}.tools: unknown tool "${wanted.name}" (known: ${known.join(', ')})`);
    const declared = tool.tier ?? 'auto';
    if (wanted.tier && TIER_RANK[wanted.tier] < TIER_RANK[declared]) {
      throw new ConfigError(
        `${where}.tools: "${wanted.name}" is ${declared}; a config may raise a tier, never lower it to ${wanted.tier}`,
      );
    }
    registry.register({ ...tool, tier: wanted.tier ?? declared });
  }

  // A server's tools are listed only once it answers: a name with one of the agent's servers' prefixes may be one.
  const prefixes = selections.map((s) => providers.server(s.server)!.prefix);
  for (const toolName of agent.confirmation.require) {
    if (!registry.get(toolName) && !prefixes.some((prefix) => toolName.startsWith(prefix)))
      throw new ConfigError(`${where}.confirmation.require: "${toolName}" is not one of this agent's tools`);
  }
  const policy = new ConfirmationPolicy().requireConfirmation(...agent.confirmation.require);
  if (agent.confirmation.requireForAll) policy.requireConfirmationForAll();

  const accessControl = new AccessControl();
  for (const [role, permissions] of Object.entries(agent.roles)) accessControl.defineRole(role, permissions);
  for (const [user, roles] of Object.entries(agent.users)) {
    const unknown = roles.find((r) => !agent.roles[r]);
    if (unknown)
      throw new ConfigError(
        `${where}.users.${user}: role "${unknown}" is not defined in agents.${name}.roles`,
      );
    accessControl.assign(user, ...roles);
  }

  const pipeline = new ToolCallPipeline({
    registry,
    accessControl,
    policy,
    maxConcurrentTools: agent.maxConcurrentTools,
  });
  const taken = new Set(registry.names());
  return {
    runtime: { name, config: agent, pipeline, registry, ...buildModel(agent, env) },
    selections,
    taken,
  };
}

function buildModel(agent: AgentConfig, env: AgentWorkerConfig): { model?: ChatModel; unavailable?: string } {
  if (agent.model.provider === 'scripted') return { model: new ScriptedModel() };
  if (!env.OPENAI_API_KEY)
    return { unavailable: 'its model provider is openai and OPENAI_API_KEY is not set' };
  return {
    model: new OpenAiModel({
      apiKey: env.OPENAI_API_KEY,
      model: agent.model.model ?? env.OPENAI_MODEL,
      baseURL: agent.model.baseUrl ?? env.OPENAI_BASE_URL,
      temperature: agent.model.temperature,
    }),
  };
}
