// `countersign policy test <file>`: example calls against the configured policies, for CI (exit 1 on any failure).
import { Command, Option } from 'commander';
import { CliError, ExitCode } from '../cli-error';
import {
  type CaseResult,
  describeActual,
  describeExpected,
  loadCases,
  type PolicyCase,
  PolicyEvaluator,
} from '../policy/policy-test';

interface Sources {
  agentsConfig: string;
  approvalsConfig: string;
  principalsConfig: string;
}

export function policyCommand(): Command {
  const policy = new Command('policy').description('Check the configured policies (no service needed)');
  policy
    .command('test')
    .description(
      'Evaluate example calls { principal, agent?, tool, args, expect } (a JSON or YAML file) against the configured ' +
        'RBAC, tiers, confirmation policy and handler rules, and the approvals routing; exit 1 if any case fails',
    )
    .argument('<file>', 'the cases: a list, or { "cases": [...] } (.json, .yaml, .yml)')
    .addOption(
      new Option('--agents-config <path>', 'the agents config (as the worker reads it)')
        .env('AGENTS_CONFIG')
        .default('config/agents.json'),
    )
    .addOption(
      new Option(
        '--approvals-config <pathOrJson>',
        'the groups and routing rules (as the approval service reads them)',
      )
        .env('APPROVALS_CONFIG')
        .default('config/approvals.json'),
    )
    .addOption(
      new Option('--principals-config <pathOrJson>', 'the principal directory')
        .env('PRINCIPALS_CONFIG')
        .default('config/principals.json'),
    )
    .addHelpText(
      'after',
      `
Expectations: "auto" (runs at once, or a confirmation handler rule approves), "manual", "denied",
or { "confirm": { "groups": [...], "quorum": n } } (either may be left out).
Admission hooks and a hook confirmation handler are not called: they answer per call, over HTTP.
Tools of MCP servers are evaluated from the config (their tiers patterns); their argument schemas are not checked.

Example:
  $ countersign policy test config/policy-tests.json`,
    )
    .action(async (file: string, options: Sources) => {
      let cases: PolicyCase[];
      let evaluator: PolicyEvaluator;
      try {
        cases = loadCases(file);
        evaluator = new PolicyEvaluator({ ...options, env: process.env });
      } catch (error) {
        throw new CliError((error as Error).message, ExitCode.InvalidInput);
      }
      const results: CaseResult[] = [];
      for (const [i, testCase] of cases.entries()) results.push(await evaluator.evaluate(testCase, i));
      process.stdout.write(table(results));
      const failed = results.filter((r) => !r.pass);
      process.stdout.write(`\n${results.length - failed.length} passed, ${failed.length} failed\n`);
      if (failed.length > 0)
        throw new CliError(
          `${failed.length} of ${results.length} policy cases failed: ${failed.map((r) => r.name).join(', ')}`,
          ExitCode.Failure,
        );
    });
  return policy;
}

function table(results: CaseResult[]): string {
  const rows = [
    ['', 'case', 'agent', 'principal', 'tool', 'expected', 'actual', 'decided by'],
    ...results.map((r) => [
      r.pass ? 'PASS' : 'FAIL',
      r.name,
      r.case.agent ?? '',
      r.case.principal,
      r.case.tool,
      describeExpected(r.case.expect),
      describeActual(r.actual),
      r.actual.rule,
    ]),
  ];
  const widths = rows[0].slice(0, -1).map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  return rows
    .map((row) => row.map((cell, c) => (c < widths.length ? cell.padEnd(widths[c]) : cell)).join('  '))
    .join('\n')
    .concat('\n');
}
