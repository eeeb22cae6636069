// Builds one agent from its config: tool registry, RBAC, confirmation policy, pipeline and model. A config that names an
// unknown tool, server or role, or lowers a tier, refuses to start (ConfigError naming the field).
import {
  admissionPlugins,
  confirmationHandler,
  type BuiltHandler,
  type HookEvent,
  resolveHooks,
} from '@countersign/admission';
import {
  AccessControl,
  ConfirmationPolicy,
  ToolCallPipeline,
  ToolRegistry,
  type ToolDefinition,
} from '@countersign/authorization';
import type { Tier } from '@countersign/contracts';
import { ConfigError } from '@countersign/platform';
import type { PipelinePolicies } from '@countersign/policy';
import type { ServerSelection, ToolProviders } from '@countersign/tool-providers';
import type { AgentConfig } from '../config/agents-config.schema';
import type { ChatModel } from '../models/chat-model';
import type { AgentModel } from '../models/chat-models';

/** One agent as the run loop uses it. */
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

const TIER_RANK: Record<Tier, number> = { auto: 0, confirm: 1, manual_only: 2 };

export interface BuiltAgent {
  runtime: AgentRuntime;
  /** The MCP servers (and their tools) the agent takes. */
  selections: ServerSelection[];
  /** Names of the agent's other tools (built in, HTTP): a server cannot take them. */
  taken: ReadonlySet<string>;
}

/**
 * Every agent's admission hooks have their secrets: checked by the worker's start before anything connects (the same
 * resolveHooks that buildAgent's plugins read them with), so a missing one stops the start with nothing left open.
 */
export function checkAdmissionSecrets(agents: Record<string, AgentConfig>, providers: ToolProviders): void {
  for (const [name, agent] of Object.entries(agents)) {
    const where = `AGENTS_CONFIG: agents.${name}.admission`;
    const secretOf = (variable: string) => providers.secret(variable);
    try {
      resolveHooks(agent.admission?.beforeTool ?? [], secretOf, `${where}.beforeTool`);
      resolveHooks(agent.admission?.afterTool ?? [], secretOf, `${where}.afterTool`);
      const handler = agent.confirmationHandler;
      if (handler?.kind === 'hook')
        resolveHooks([handler], secretOf, `AGENTS_CONFIG: agents.${name}.confirmationHandler`);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  }
}

export interface BuildOptions {
  /**
   * Leave out what calls out over HTTP (admission hooks, a hook confirmation handler): `countersign policy test`
   * evaluates the static policy only. @defaultValue false
   */
  withoutHooks?: boolean;
  /** Variables for confirmation rules' `when.env`. @defaultValue the providers' (the service's environment) */
  envOf?: (variable: string) => string | undefined;
  /** The deployment's Cedar policy set (in RBAC's place) and shadow set, loaded once for every agent (loadPolicies). */
  policies?: PipelinePolicies;
}

/**
 * One agent: its registry (built-in and HTTP tools now, its MCP servers' once they list them: `selections`), RBAC,
 * confirmation policy, pipeline and model. Throws a ConfigError naming the field of a config that would fail open
 * or names nothing.
 */
export function buildAgent(
  name: string,
  agent: AgentConfig,
  builtIns: ToolDefinition[],
  providers: ToolProviders,
  model: AgentModel,
  recordHook: (event: HookEvent) => Promise<void> = async () => {},
  options: BuildOptions = {},
): BuiltAgent {
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
  // Every user's roles are defined: the agents config's schema checked it (usersHaveDefinedRoles).
  for (const [user, roles] of Object.entries(agent.users)) accessControl.assign(user, ...roles);

  const runtime: Partial<AgentRuntime> = {};
  let plugins;
  let handler: BuiltHandler | undefined;
  const secretOf = (variable: string) => providers.secret(variable);
  try {
    plugins = options.withoutHooks
      ? []
      : admissionPlugins(agent.admission, {
          where: `${where}.admission`,
          secretOf,
          describeStep: (callId) => runtime.describeStep?.(callId),
          observe: recordHook,
        });
    const handlerConfig = agent.confirmationHandler;
    if (handlerConfig && !(options.withoutHooks && handlerConfig.kind === 'hook'))
      handler = confirmationHandler(handlerConfig, {
        where: `${where}.confirmationHandler`,
        secretOf,
        envOf: options.envOf ?? secretOf,
        observe: recordHook,
      });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const pipeline = new ToolCallPipeline({
    registry,
    accessControl,
    policy,
    ...options.policies,
    plugins,
    ...(handler ? { confirmationHandler: handler.handler, confirmationTimeoutMs: handler.timeoutMs } : {}),
    maxConcurrentTools: agent.maxConcurrentTools,
  });
  const taken = new Set(registry.names());
  // One object: a runbook agent's describeStep, set after this, is what its hooks read.
  Object.assign(runtime, { name, config: agent, pipeline, registry, ...model });
  return { runtime: runtime as AgentRuntime, selections, taken };
}
