// Builds, once at start-up, each configured agent: its tool registry, RBAC, confirmation policy,
// pipeline and model. A config that names an unknown tool or role, or lowers a tier, refuses to start.
import {
  AccessControl,
  ConfirmationPolicy,
  ToolCallPipeline,
  ToolRegistry,
  type RegisteredTool,
  type ToolDefinition,
} from '@countersign/authorization';
import type { Tier } from '@countersign/contracts';
import { ConfigError } from '@countersign/platform';
import type { AgentConfig, AgentsConfig } from '../config/agents-config.schema';
import type { AgentWorkerConfig } from '../config/worker-config';
import type { InfraStore } from '../infra/infra-store';
import type { ChatModel } from '../models/chat-model';
import { OpenAiModel } from '../models/openai-model';
import { ScriptedModel } from '../models/scripted-model';
import { opsTools } from './ops-tools';

export interface AgentRuntime {
  name: string;
  config: AgentConfig;
  pipeline: ToolCallPipeline;
  registry: ToolRegistry;
  /** Undefined when the agent cannot run (e.g. no API key); `unavailable` says why. */
  model?: ChatModel;
  unavailable?: string;
}

const TIER_RANK: Record<Tier, number> = { auto: 0, confirm: 1, manual_only: 2 };

export class AgentCatalog {
  private readonly agents = new Map<string, AgentRuntime>();

  constructor(config: AgentsConfig, env: AgentWorkerConfig, infra: InfraStore) {
    for (const [name, agent] of Object.entries(config.agents)) {
      const builtIns = opsTools(infra, agent.infra);
      this.agents.set(name, buildAgent(name, agent, env, builtIns));
    }
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
}

function buildAgent(
  name: string,
  agent: AgentConfig,
  env: AgentWorkerConfig,
  builtIns: ToolDefinition[],
): AgentRuntime {
  const where = `AGENTS_CONFIG: agents.${name}`;
  const registry = new ToolRegistry();
  for (const entry of agent.tools) {
    const wanted: { name: string; tier?: Tier } = typeof entry === 'string' ? { name: entry } : entry;
    const tool = builtIns.find((t) => t.name === wanted.name);
    if (!tool)
      throw new ConfigError(
        `${where}.tools: unknown tool "${wanted.name}" (known: ${builtIns.map((t) => t.name).join(', ')})`,
      );
    const declared = tool.tier ?? 'auto';
    if (wanted.tier && TIER_RANK[wanted.tier] < TIER_RANK[declared]) {
      throw new ConfigError(
        `${where}.tools: "${wanted.name}" is ${declared}; a config may raise a tier, never lower it to ${wanted.tier}`,
      );
    }
    registry.register({ ...tool, tier: wanted.tier ?? declared });
  }

  for (const toolName of agent.confirmation.require) {
    if (!registry.get(toolName))
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
  return { name, config: agent, pipeline, registry, ...buildModel(agent, env) };
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
