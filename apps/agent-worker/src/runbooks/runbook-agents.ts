// Which agents and tools a runbook uses (its agent steps and tool steps, its sub-runbooks' included), and the start-up
// check that every one of them is in AGENTS_CONFIG.
import type { RunbookDefinition } from '@countersign/contracts';
import { ConfigError } from '@countersign/platform';
import type { AgentsConfig } from '../config/agents-config.schema';
import { own } from './own';
import type { RunbookLibrary } from './runbook-library';

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
