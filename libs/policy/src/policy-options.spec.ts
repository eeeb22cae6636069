import { mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessControl, ToolCallPipeline, ToolRegistry, defineTool } from '@countersign/authorization';
import { z } from 'zod';
import { loadPolicies, type ShadowSink } from './policy-options';

const EXAMPLE = join(__dirname, '../../../config/policies');

function dir(text: string): string {
  const d = mkdtempSync(join(tmpdir(), 'cs-policy-'));
  copyFileSync(join(EXAMPLE, 'schema.cedarschema'), join(d, 'schema.cedarschema'));
  writeFileSync(join(d, 'p.cedar'), text);
  return d;
}

function sink() {
  const counted: { active: string; shadow: string }[] = [];
  let errors = 0;
  const lines: Record<string, unknown>[] = [];
  const s: ShadowSink = {
    warn: (fields) => lines.push(fields),
    disagreements: { inc: (labels) => counted.push(labels) },
    errors: { inc: () => errors++ },
  };
  return { s, counted, lines, errors: () => errors };
}

const transfer = defineTool({
  name: 'transfer',
  description: 'Sends money.',
  args: z.object({ amount: z.unknown() }),
  tier: 'auto',
  handler: () => 'sent',
});
const caller = { runId: 'r1', agent: 'ops', userId: 'bob', scopes: [] };

describe('loadPolicies', () => {
  it('is empty without a policy section: the JSON rules decide', () => {
    expect(loadPolicies(undefined, [], 'X', sink().s)).toEqual({});
  });

  it('names the config field before the file, line and policy of a bad set', () => {
    const bad = dir('@id("p") @tier("never") permit (principal, action, resource);');
    expect(() => loadPolicies({ shadow: { cedar: bad } }, [], 'AGENTS_CONFIG: policy', sink().s)).toThrow(
      `AGENTS_CONFIG: policy.shadow.cedar: ${join(bad, 'p.cedar')}:1: policy "p": @tier must be`,
    );
  });

  it('counts and logs a shadow disagreement and a shadow error; the active rules decide', async () => {
    const shadowDir = dir(`@id("big") @tier("confirm") @groups("finance")
permit (principal, action, resource) when { resource.args has amount && resource.args.amount > 10 };`);
    const reporting = sink();
    const policies = loadPolicies({ shadow: { cedar: shadowDir } }, [], 'X', reporting.s);
    const registry = new ToolRegistry([transfer]);
    const accessControl = new AccessControl().defineRole('op', { allow: ['tool:*'] }).assign('bob', 'op');
    const sut = new ToolCallPipeline({ registry, accessControl, ...policies });

    const call = (id: string, amount: unknown) =>
      sut.evaluate({ id, name: 'transfer', args: { amount } }, caller);
    expect(await call('c1', 50)).toMatchObject({ kind: 'executed' });
    expect(reporting.counted).toEqual([{ active: 'auto', shadow: 'confirm' }]);
    expect(reporting.lines[0]).toMatchObject({
      event: 'policy.shadow_disagreement',
      principal: 'bob',
      tool: 'transfer',
      active: { outcome: 'auto', by: 'json rules' },
      shadow: { outcome: 'confirm', groups: ['finance'], by: 'policy big' },
    });
    // A fraction Cedar cannot read: an error of the shadow, counted as such, and the call still runs.
    expect(await call('c2', 1.5)).toMatchObject({ kind: 'executed' });
    expect(reporting.errors()).toBe(1);
    expect(reporting.counted).toHaveLength(1);
  });
});
