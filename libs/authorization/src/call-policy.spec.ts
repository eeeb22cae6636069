import { AccessControl } from './access-control';
import { caller, countingTool } from './__fixtures__/counting-tools';
import type { CallPolicy, CallPolicyVerdict, ShadowDisagreement, ShadowPolicy } from './call-policy';
import { DecisionBook } from './decisions';
import type { ToolPlugin } from './plugins';
import { type PipelineOptions, ToolCallPipeline } from './tool-call-pipeline';
import { ToolRegistry } from './tool-registry';

const policy = (decide: CallPolicy['decide']): CallPolicy => ({ name: 'test policy', decide });
const always = (verdict: CallPolicyVerdict) => policy(() => verdict);
const PAYMENTS = { id: 'payments-quorum', condition: 'resource.args.amount > 1000' };

function setup(options: Partial<PipelineOptions> = {}) {
  const tools = { read_logs: countingTool('read_logs', 'auto'), restart: countingTool('restart', 'confirm') };
  const registry = new ToolRegistry(Object.values(tools).map((t) => t.definition));
  // RBAC that would refuse everything: a call policy answers in its place.
  const accessControl = new AccessControl();
  const sut = new ToolCallPipeline({ registry, accessControl, ...options });
  return { sut, tools };
}
const ctx = () => ({ ...caller, decisions: new DecisionBook([]) });
const read = { id: 'c1', name: 'read_logs', args: { service: 'api' } };

describe('a call policy in the pipeline', () => {
  it('answers in RBAC’s place: its allow runs an auto call that RBAC alone would refuse', async () => {
    const { sut, tools } = setup({ callPolicy: always({ allowed: true, tier: 'auto', policy: PAYMENTS }) });
    expect(await sut.evaluate(read, ctx())).toMatchObject({ kind: 'executed' });
    expect(tools.read_logs.executions).toBe(1);
  });

  it('refuses what it denies, saying why, and nothing runs', async () => {
    const { sut, tools } = setup({
      callPolicy: always({ allowed: false, reason: 'no Cedar policy permits it' }),
    });
    expect(await sut.evaluate(read, ctx())).toEqual({
      kind: 'denied',
      by: 'rbac',
      callId: 'c1',
      toolName: 'read_logs',
      content: 'Tool "read_logs" was refused: no Cedar policy permits it. It did not run.',
    });
    expect(tools.read_logs.executions).toBe(0);
  });

  it('refuses the call when the policy throws (fail closed)', async () => {
    const { sut, tools } = setup({
      callPolicy: policy(() => {
        throw new Error('wasm trap');
      }),
    });
    const outcome = await sut.evaluate(read, ctx());
    expect(outcome).toMatchObject({ kind: 'denied', by: 'rbac' });
    expect(outcome.content).toMatch(/test policy failed to evaluate \(wasm trap\)/);
    expect(tools.read_logs.executions).toBe(0);
  });

  it('is given the parsed arguments, the principal and the declared tier', async () => {
    const decide = jest.fn(() => ({ allowed: true, tier: 'auto' }) as const);
    const { sut } = setup({ callPolicy: policy(decide) });
    await sut.evaluate(read, ctx());
    expect(decide).toHaveBeenCalledWith({
      principal: caller.userId,
      agent: caller.agent,
      toolName: 'read_logs',
      args: { service: 'api' },
      tier: 'auto',
    });
  });

  it('sends a call to the groups and quorum it names, even an auto one, with the policy on the route', async () => {
    const { sut, tools } = setup({
      callPolicy: always({
        allowed: true,
        tier: 'confirm',
        groups: ['finance'],
        quorum: 2,
        policy: PAYMENTS,
      }),
    });
    expect(await sut.evaluate(read, ctx())).toMatchObject({
      kind: 'pending_confirmation',
      tier: 'confirm',
      route: { by: 'policy payments-quorum', groups: ['finance'], quorum: 2, policy: PAYMENTS },
    });
    expect(tools.read_logs.executions).toBe(0);
  });

  it('lets a confirmation handler decide a call the policy made confirm without naming people, not one naming them', async () => {
    const confirmationHandler = () => ({ decision: 'approve' as const });
    const tierOnly = setup({
      callPolicy: always({ allowed: true, tier: 'confirm', policy: PAYMENTS }),
      confirmationHandler,
    });
    expect(await tierOnly.sut.evaluate(read, ctx())).toMatchObject({
      kind: 'executed',
      approvedBy: 'policy',
    });
    const named = setup({
      callPolicy: always({ allowed: true, tier: 'confirm', groups: ['finance'], policy: PAYMENTS }),
      confirmationHandler,
    });
    expect(await named.sut.evaluate(read, ctx())).toMatchObject({ kind: 'pending_confirmation' });
    expect(named.tools.read_logs.executions).toBe(0);
  });

  it('never lowers a tier: a confirm tool stays confirm when the policy says auto', async () => {
    const { sut } = setup({ callPolicy: always({ allowed: true, tier: 'auto' }) });
    const outcome = await sut.evaluate({ id: 'c2', name: 'restart', args: { service: 'api' } }, ctx());
    expect(outcome).toMatchObject({ kind: 'pending_confirmation', tier: 'confirm' });
  });

  it("gives way to an admission hook's route, asked later about the same call", async () => {
    const hook: ToolPlugin = { name: 'gate', beforeTool: () => ({ action: 'confirm', groups: ['ops'] }) };
    const { sut } = setup({
      callPolicy: always({ allowed: true, tier: 'confirm', groups: ['finance'], policy: PAYMENTS }),
      plugins: [hook],
    });
    expect(await sut.evaluate(read, ctx())).toMatchObject({ route: { by: 'gate', groups: ['ops'] } });
  });
});

describe('a shadow policy', () => {
  function shadowOf(decide: CallPolicy['decide']) {
    const disagreements: ShadowDisagreement[] = [];
    const errors: string[] = [];
    const shadowPolicy: ShadowPolicy = {
      policy: policy(decide),
      onDisagreement: (d) => disagreements.push(d),
      onError: (e) => errors.push(e.reason),
    };
    return { shadowPolicy, disagreements, errors };
  }

  it('reports a disagreement with the JSON rules and decides nothing', async () => {
    const shadow = shadowOf(() => ({ allowed: false, reason: 'no', policy: PAYMENTS }));
    const accessControl = new AccessControl()
      .defineRole('op', { allow: ['tool:*'] })
      .assign(caller.userId, 'op');
    const { sut, tools } = setup({ accessControl, shadowPolicy: shadow.shadowPolicy });
    expect(await sut.evaluate(read, ctx())).toMatchObject({ kind: 'executed' });
    expect(tools.read_logs.executions).toBe(1);
    expect(shadow.disagreements).toEqual([
      {
        input: expect.objectContaining({ toolName: 'read_logs' }),
        active: { outcome: 'auto', by: 'json rules' },
        shadow: { outcome: 'denied', by: 'policy payments-quorum' },
      },
    ]);
  });

  it('compares a call RBAC refused before its arguments, and the refusal holds', async () => {
    const shadow = shadowOf(() => ({ allowed: true, tier: 'auto' }));
    const { sut, tools } = setup({ shadowPolicy: shadow.shadowPolicy });
    expect(await sut.evaluate(read, ctx())).toMatchObject({ kind: 'denied', by: 'rbac' });
    expect(tools.read_logs.executions).toBe(0);
    expect(shadow.disagreements.map((d) => [d.active.outcome, d.shadow.outcome])).toEqual([
      ['denied', 'auto'],
    ]);
  });

  it('reports nothing when it agrees, and compares groups and quorum where both name them', async () => {
    const same = shadowOf(() => ({ allowed: true, tier: 'confirm', groups: ['finance'], quorum: 2 }));
    const active = always({
      allowed: true,
      tier: 'confirm',
      groups: ['finance'],
      quorum: 2,
      policy: PAYMENTS,
    });
    await setup({ callPolicy: active, shadowPolicy: same.shadowPolicy }).sut.evaluate(read, ctx());
    expect(same.disagreements).toEqual([]);

    const other = shadowOf(() => ({ allowed: true, tier: 'confirm', groups: ['finance'], quorum: 1 }));
    await setup({ callPolicy: active, shadowPolicy: other.shadowPolicy }).sut.evaluate(read, ctx());
    expect(other.disagreements).toHaveLength(1);
  });

  it('counts an error of its own and never affects the call', async () => {
    const shadow = shadowOf(() => {
      throw new Error('policy p failed to evaluate');
    });
    const { sut, tools } = setup({
      callPolicy: always({ allowed: true, tier: 'auto' }),
      shadowPolicy: shadow.shadowPolicy,
    });
    expect(await sut.evaluate(read, ctx())).toMatchObject({ kind: 'executed' });
    expect(tools.read_logs.executions).toBe(1);
    expect(shadow.errors).toEqual(['policy p failed to evaluate']);
    expect(shadow.disagreements).toEqual([]);
  });

  it('never affects the call even when reporting throws', async () => {
    const shadowPolicy: ShadowPolicy = {
      policy: always({ allowed: false, reason: 'no' }),
      onDisagreement: () => {
        throw new Error('logger down');
      },
      onError: () => {},
    };
    const { sut, tools } = setup({ callPolicy: always({ allowed: true, tier: 'auto' }), shadowPolicy });
    expect(await sut.evaluate(read, ctx())).toMatchObject({ kind: 'executed' });
    expect(tools.read_logs.executions).toBe(1);
  });
});
