// `countersign policy test`: example calls evaluated offline by the owners the services use — the worker's agent
// builder (registry, tiers, confirmation.require, RBAC, a rules confirmation handler: its ToolCallPipeline up to
// execution, without admission hooks or a hook handler) and the approval service's routeRequest (groups and quorum).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { Authorization } from '@countersign/authorization';
import { ApprovalRequestSchema, describeZodError, IdSchema, ToolNameSchema } from '@countersign/contracts';
import { InfraStore, opsTools } from '@countersign/demo-infra';
import { createLogger, loadJsonConfig, PrincipalsConfigSchema } from '@countersign/platform';
import { loadPolicies, type PipelinePolicies } from '@countersign/policy';
import { matchesAny, SecretSource, ToolProviders } from '@countersign/tool-providers';
import {
  type AgentRuntime,
  buildAgent,
  type BuiltAgent,
} from '../../../agent-worker/src/agents/agent-builder';
import { type AgentsConfig, loadAgentsConfig } from '../../../agent-worker/src/config/agents-config.schema';
import type { ApprovalsConfig } from '../../../approval-service/src/config/approvals-config.schema';
import { loadApprovalRules } from '../../../approval-service/src/config/approval-service.config';
import { routeRequest } from '../../../approval-service/src/requests/routing/route-request';
import { toApprovalRequest, toFrontierCall } from '../../../agent-worker/src/runs/frontier';

const ExpectSchema = z.union([
  z.enum(['auto', 'manual', 'denied']),
  z
    .object({
      confirm: z
        .object({
          groups: z.array(IdSchema).min(1).optional(),
          quorum: z.number().int().min(1).optional(),
        })
        .strict(),
    })
    .strict(),
]);
export type Expected = z.infer<typeof ExpectSchema>;

export const PolicyCaseSchema = z
  .object({
    name: z.string().min(1).max(200).optional(),
    principal: IdSchema,
    agent: IdSchema.optional(),
    tool: ToolNameSchema,
    args: z.record(z.string(), z.unknown()).default({}),
    expect: ExpectSchema,
  })
  .strict();
export type PolicyCase = z.infer<typeof PolicyCaseSchema>;

/** The file: `{ cases }` (a bare list is read as its cases). */
export const PolicyTestFileSchema = z.object({ cases: z.array(PolicyCaseSchema).min(1) }).strict();

export interface Actual {
  outcome: 'auto' | 'manual' | 'denied' | 'confirm' | 'error';
  groups?: string[];
  quorum?: number;
  /** What decided, in words: the tier, the RBAC reason, the handler and rule, the route's rule and why. */
  rule: string;
}

export interface CaseResult {
  name: string;
  case: PolicyCase;
  actual: Actual;
  pass: boolean;
}

export interface PolicySources {
  agentsConfig: string;
  approvalsConfig: string;
  principalsConfig: string;
  /** The environment: secrets are not needed (nothing connects); confirmation rules' `when.env` read it. */
  env: Readonly<Record<string, string | undefined>>;
}

/** Reads and validates the cases file (JSON, or YAML for `.yaml`/`.yml`); throws naming the field. */
export function loadCases(path: string): PolicyCase[] {
  const file = resolve(path);
  const text = readFileSync(file, 'utf8');
  const raw: unknown = /\.ya?ml$/i.test(file) ? parseYaml(text) : JSON.parse(text);
  const parsed = PolicyTestFileSchema.safeParse(Array.isArray(raw) ? { cases: raw } : raw);
  if (!parsed.success) {
    const lines = describeZodError(parsed.error).map((i) => `  ${i.path}: ${i.message}`);
    throw new Error(`invalid ${file}:\n${lines.join('\n')}`);
  }
  return parsed.data.cases;
}

/** The configured policies, loaded once as the services load them. */
export class PolicyEvaluator {
  private readonly agents: AgentsConfig;
  private readonly approvals: ApprovalsConfig;
  private readonly providers: ToolProviders;
  private readonly built = new Map<string, BuiltAgent>();
  /** The Cedar policy set in RBAC's place, when the agents config names one (a shadow set decides nothing here). */
  private readonly policies: PipelinePolicies;

  constructor(private readonly sources: PolicySources) {
    this.agents = loadAgentsConfig(sources.agentsConfig);
    this.approvals = loadApprovalRules(sources.approvalsConfig, sources.principalsConfig).approvals;
    const { principals } = loadJsonConfig(
      'PRINCIPALS_CONFIG',
      sources.principalsConfig,
      PrincipalsConfigSchema,
    );
    const { callPolicy } = loadPolicies(
      this.agents.policy && { cedar: this.agents.policy.cedar },
      principals,
      'AGENTS_CONFIG: policy',
      { warn: () => {}, disagreements: { inc: () => {} }, errors: { inc: () => {} } },
    );
    this.policies = callPolicy ? { callPolicy } : {};
    this.providers = new ToolProviders(this.agents, {
      secrets: new SecretSource(sources.env),
      logger: createLogger('policy-test', 'silent'),
    });
  }

  async evaluate(testCase: PolicyCase, index: number): Promise<CaseResult> {
    const actual = await this.actual(testCase, index);
    return {
      name: testCase.name ?? `#${index + 1}`,
      case: testCase,
      actual,
      pass: matches(testCase.expect, actual),
    };
  }

  private async actual(testCase: PolicyCase, index: number): Promise<Actual> {
    const agentName = testCase.agent ?? this.onlyAgent();
    if (!agentName)
      return { outcome: 'error', rule: `no agent named, and the config has several (${this.agentNames()})` };
    const runtime = this.runtime(agentName);
    if (!runtime) return { outcome: 'error', rule: `unknown agent "${agentName}" (${this.agentNames()})` };
    this.registerConfiguredTool(agentName, testCase.tool);
    const call = { id: `policy-test-${index + 1}`, name: testCase.tool, args: testCase.args };
    const caller = { runId: 'policy-test', agent: agentName, userId: testCase.principal, scopes: [] };
    const authorization = await runtime.pipeline.authorize(call, caller);
    return this.describe(authorization, runtime, testCase, agentName);
  }

  private describe(a: Authorization, runtime: AgentRuntime, testCase: PolicyCase, agent: string): Actual {
    switch (a.kind) {
      case 'ready':
        if (a.approvedBy === 'policy')
          return {
            outcome: 'auto',
            rule: `confirm tier, approved by ${a.policyDecision?.by ?? 'the confirmation handler'}${
              a.policyDecision?.rule ? ` (rule ${a.policyDecision.rule})` : ''
            }`,
          };
        return { outcome: 'auto', rule: 'auto tier' };
      case 'denied':
        return {
          outcome: 'denied',
          rule: a.policyDecision
            ? `${a.policyDecision.by}${a.policyDecision.rule ? ` (rule ${a.policyDecision.rule})` : ''}: ${a.content}`
            : `${a.by}: ${a.content}`,
        };
      case 'manual_required':
        return { outcome: 'manual', rule: 'manual_only tier' };
      case 'pending_confirmation': {
        // The request as the worker would publish it (with a policy's or a hook's route), routed as the service does.
        const waiting = toFrontierCall(
          { id: a.callId, name: a.toolName, args: a.args as Record<string, unknown> },
          0,
          a,
        );
        const request = ApprovalRequestSchema.parse(
          toApprovalRequest(
            { runId: 'policy-test', agent, userId: testCase.principal },
            {
              ...waiting.body,
              requestId: 'policy-test',
            },
          ),
        );
        const route = routeRequest(request, this.approvals, { expiresInMs: 0 });
        const tier =
          runtime.registry.get(a.toolName)?.tier === 'confirm' ? 'confirm tier' : 'confirmation.require';
        if (!route)
          return { outcome: 'denied', rule: `${tier}, and no approver route (no rule, no defaultGroup)` };
        return {
          outcome: 'confirm',
          groups: route.groups,
          quorum: route.quorum,
          rule: `${tier}; route "${route.rule}": ${route.why}`,
        };
      }
      case 'error':
        return { outcome: 'error', rule: a.content };
      default:
        // Skipped and aborted come from admission hooks, which policy test leaves out.
        return { outcome: 'error', rule: a.content };
    }
  }

  private onlyAgent(): string | undefined {
    const names = Object.keys(this.agents.agents);
    return names.length === 1 ? names[0] : undefined;
  }

  private agentNames(): string {
    return Object.keys(this.agents.agents).join(', ');
  }

  /** The agent as the worker builds it (without hooks), and its MCP servers' tools as their config defines them. */
  private runtime(name: string): AgentRuntime | undefined {
    const config = Object.hasOwn(this.agents.agents, name) ? this.agents.agents[name] : undefined;
    if (!config) return undefined;
    let built = this.built.get(name);
    if (!built) {
      // The ops tools' store is never reached: nothing executes here.
      const infra = new InfraStore(undefined as never, 'policy-test');
      built = buildAgent(
        name,
        config,
        opsTools(infra, config.infra),
        this.providers,
        { unavailable: 'policy test' },
        undefined,
        {
          withoutHooks: true,
          policies: this.policies,
          envOf: (variable) => this.sources.env[variable],
        },
      );
      this.built.set(name, built);
    }
    return built.runtime;
  }

  /** Registers an MCP server's tool named by a case, from the config alone (the server is not asked). */
  private registerConfiguredTool(agent: string, tool: string): void {
    const built = this.built.get(agent);
    if (!built || built.runtime.registry.get(tool)) return;
    for (const selection of built.selections) {
      const server = this.providers.server(selection.server)!;
      if (!tool.startsWith(server.prefix)) continue;
      const remote = tool.slice(server.prefix.length);
      if (selection.only && !matchesAny(remote, selection.only)) continue;
      built.runtime.registry.register(server.configuredDefinition(remote));
      return;
    }
  }
}

function matches(expected: Expected, actual: Actual): boolean {
  if (typeof expected === 'string') return expected === actual.outcome;
  if (actual.outcome !== 'confirm') return false;
  const { groups, quorum } = expected.confirm;
  if (groups && [...groups].sort().join(',') !== [...(actual.groups ?? [])].sort().join(',')) return false;
  return quorum === undefined || quorum === actual.quorum;
}

export function describeExpected(expected: Expected): string {
  if (typeof expected === 'string') return expected;
  const { groups, quorum } = expected.confirm;
  return `confirm ${groups ? groups.join('+') : '*'} q${quorum ?? '*'}`;
}

export function describeActual(actual: Actual): string {
  return actual.outcome === 'confirm'
    ? `confirm ${(actual.groups ?? []).join('+')} q${actual.quorum}`
    : actual.outcome;
}
