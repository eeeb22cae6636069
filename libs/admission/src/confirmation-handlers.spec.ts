import { ConfirmationHandlerConfigSchema, type HandlerRule } from './confirmation-handler.schema';
import { confirmationHandler, decideByRules } from './confirmation-handlers';

const rules: HandlerRule[] = [
  {
    name: 'staging-restarts',
    tools: ['restart_*'],
    when: { env: { DEPLOY_ENV: 'staging' } },
    decision: 'approve',
  },
  {
    name: 'big-scale',
    tools: ['scale_service'],
    when: { args: { 'target.env': 'prod', replicas: 50 } },
    decision: 'deny',
    reason: 'too big',
  },
];
const env = (values: Record<string, string>) => (variable: string) => values[variable];

describe('decideByRules', () => {
  it('approves by the first matching rule, naming handler and rule', () => {
    expect(
      decideByRules('auto', rules, { toolName: 'restart_service', args: {} }, env({ DEPLOY_ENV: 'staging' })),
    ).toEqual({
      decision: 'approve',
      decidedBy: { by: 'handler:auto', rule: 'staging-restarts' },
    });
  });

  it.each([
    ['another environment', 'restart_service', {}, { DEPLOY_ENV: 'production' }],
    ['no environment', 'restart_service', {}, {}],
    ['another tool', 'get_service_status', {}, { DEPLOY_ENV: 'staging' }],
    ['an argument that differs', 'scale_service', { target: { env: 'prod' }, replicas: 49 }, {}],
    [
      'an argument path that is an object',
      'scale_service',
      { target: { env: { x: 'prod' } }, replicas: 50 },
      {},
    ],
    ['a number given as text', 'scale_service', { target: { env: 'prod' }, replicas: '50' }, {}],
  ])('asks a person for %s', (_case, toolName, args, values) => {
    expect(decideByRules('auto', rules, { toolName, args }, env(values))).toEqual({ decision: 'ask' });
  });

  it('denies with the rule’s reason when every argument condition holds', () => {
    const args = { target: { env: 'prod' }, replicas: 50 };
    expect(decideByRules('auto', rules, { toolName: 'scale_service', args }, env({}))).toEqual({
      decision: 'deny',
      reason: 'too big',
      decidedBy: { by: 'handler:auto', rule: 'big-scale' },
    });
  });
});

describe('confirmationHandler', () => {
  it('reads the environment once, when built', async () => {
    const values: Record<string, string> = { DEPLOY_ENV: 'staging' };
    const config = ConfirmationHandlerConfigSchema.parse({ kind: 'rules', name: 'auto', rules });
    const { handler } = confirmationHandler(config, {
      where: 'x',
      secretOf: () => undefined,
      envOf: env(values),
    });
    values.DEPLOY_ENV = 'production';
    const request = {
      runId: 'r',
      agent: 'ops',
      userId: 'alice',
      scopes: [],
      callId: 'c',
      toolName: 'restart_service',
      args: {},
      fingerprint: '',
    };
    expect(await handler(request)).toMatchObject({ decision: 'approve' });
  });

  it('refuses to build a hook handler whose secret is not set, naming the field', () => {
    const config = ConfirmationHandlerConfigSchema.parse({
      kind: 'hook',
      name: 'board',
      tools: ['*'],
      url: 'https://board.internal/confirm',
      secretEnv: 'BOARD_SECRET',
    });
    expect(() =>
      confirmationHandler(config, {
        where: 'AGENTS_CONFIG: agents.ops.confirmationHandler',
        secretOf: () => undefined,
        envOf: env({}),
      }),
    ).toThrow(
      'AGENTS_CONFIG: agents.ops.confirmationHandler[0].secretEnv: BOARD_SECRET (the secret of hook "board") is not set',
    );
  });

  it('refuses a rule with an unknown field', () => {
    const parsed = ConfirmationHandlerConfigSchema.safeParse({
      kind: 'rules',
      name: 'auto',
      rules: [{ name: 'r', tools: ['*'], decision: 'approve', when: { principal: 'alice' } }],
    });
    expect(parsed.success).toBe(false);
  });
});
