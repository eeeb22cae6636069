// A Cedar policy set of 50 policies for the benches (the size issue 28 asks the cost for): one permit that matches
// the bench's auto call (get_service_status of agent ops), one forbid and 48 permits that are evaluated and do not
// match it (other tools, argument conditions, groups), validated against the example schema (config/policies). As in
// a set written per tool, each names its tool first, so a call is asked of the policies of its tool (libs/policy).
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BENCH_POLICY_COUNT = 50;

export function benchPolicyText(): string {
  const policies = [
    `@id("bench-read")
permit (principal, action == Action::"call", resource)
when { resource.tool == "get_service_status" && context.agent == "ops" };`,
    `@id("bench-forbid")
forbid (principal, action == Action::"call", resource)
when { resource.tool == "delete_volume" && resource.args has volume && resource.args.volume like "prod-*" };`,
  ];
  for (let i = 0; policies.length < BENCH_POLICY_COUNT; i++)
    policies.push(`@id("bench-${i}")
@tier("confirm")
@groups("team-${i % 7}")
@quorum("${1 + (i % 3)}")
permit (principal in Group::"team-${i % 7}", action == Action::"call", resource)
when { resource.tool == "transfer_${i}" && resource.args has amount && resource.args.amount > ${i * 100} };`);
  return policies.join('\n\n');
}

/** A directory holding the example schema and the 50 policies. */
export function writeBenchPolicySet(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cs-bench-cedar-'));
  copyFileSync(join(__dirname, '../../config/policies/schema.cedarschema'), join(dir, 'schema.cedarschema'));
  writeFileSync(join(dir, 'bench.cedar'), benchPolicyText());
  return dir;
}

/** The bench workers' agents config (test/support/agents.json) with the 50 policies in RBAC's place; its path. */
export function writeCedarAgentsConfig(): string {
  const agents = JSON.parse(
    readFileSync(join(__dirname, '../../test/support/agents.json'), 'utf8'),
  ) as object;
  const file = join(mkdtempSync(join(tmpdir(), 'cs-bench-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify({ ...agents, policy: { cedar: writeBenchPolicySet() } }));
  return file;
}
