import {
  AdmissionConfigSchema,
  BeforeToolAnswerSchema,
  MAX_HOOK_TIMEOUT_MS,
} from './admission-config.schema';
import { resolveHooks } from './hook-client';

const hook = (extra: object = {}) => ({
  name: 'gate',
  tools: ['*'],
  url: 'https://policy.internal/before',
  secretEnv: 'GATE_SECRET',
  ...extra,
});

const issues = (config: unknown) => {
  const parsed = AdmissionConfigSchema.safeParse(config);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('AdmissionConfigSchema', () => {
  it('defaults the timeout to 2 s and the stages to none', () => {
    expect(AdmissionConfigSchema.parse({ beforeTool: [hook()] })).toEqual({
      beforeTool: [{ ...hook(), timeoutMs: 2_000 }],
      afterTool: [],
    });
  });

  it.each([
    ['a timeout above the bound', { timeoutMs: MAX_HOOK_TIMEOUT_MS + 1 }, 'beforeTool.0.timeoutMs'],
    ['an inline secret instead of a variable name', { secretEnv: 's3cr3t!' }, 'beforeTool.0.secretEnv'],
    ['a URL that is not http(s)', { url: 'file:///etc/passwd' }, 'beforeTool.0.url'],
    ['no tool pattern', { tools: [] }, 'beforeTool.0.tools'],
    ['an unknown field', { secret: 'x' }, 'beforeTool.0'],
  ])('refuses %s, naming the field', (_case, extra, path) => {
    expect(issues({ beforeTool: [hook(extra)] }).join('\n')).toContain(path);
  });

  it('refuses two hooks of one stage under one name', () => {
    expect(issues({ afterTool: [hook(), hook()] })).toEqual(['afterTool.1.name: "gate" is used twice']);
  });
});

describe('BeforeToolAnswerSchema', () => {
  it.each([
    { action: 'allow' },
    { action: 'skip', content: '' },
    { action: 'deny', reason: 'no' },
    { action: 'confirm' },
    { action: 'confirm', groups: ['finance'], quorum: 2 },
    { action: 'abort', reason: 'incident' },
  ])('takes %j', (answer) => {
    expect(BeforeToolAnswerSchema.safeParse(answer).success).toBe(true);
  });

  it.each([
    { action: 'deny' },
    { action: 'abort', reason: '' },
    { action: 'confirm', quorum: 0 },
    { action: 'confirm', groups: [] },
    { action: 'allow', extra: true },
    { action: 'approve' },
    [],
  ])('refuses %j', (answer) => {
    expect(BeforeToolAnswerSchema.safeParse(answer).success).toBe(false);
  });
});

describe('resolveHooks', () => {
  it('reads each secret, and names the hook and variable of one that is not set', () => {
    const [gate] = AdmissionConfigSchema.parse({ beforeTool: [hook()] }).beforeTool;
    expect(resolveHooks([gate], () => 'k', 'X.beforeTool')).toEqual([{ ...gate, secret: 'k' }]);
    expect(() => resolveHooks([gate], () => undefined, 'X.beforeTool')).toThrow(
      'X.beforeTool[0].secretEnv: GATE_SECRET (the secret of hook "gate") is not set',
    );
  });
});
