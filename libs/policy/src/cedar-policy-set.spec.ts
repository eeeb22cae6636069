import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallPolicyInput } from '@countersign/authorization';
import { CedarPolicySet, conditionText, PolicyLoadError } from './cedar-policy-set';
import { readdirSync } from 'node:fs';

const EXAMPLE = join(__dirname, '../../../config/policies');
const SCHEMA = readFileSync(join(EXAMPLE, 'schema.cedarschema'), 'utf8');
const PRINCIPALS = [
  { id: 'bob', policyGroups: ['payments'] },
  { id: 'alice', policyGroups: ['operators'] },
  { id: 'mallory', policyGroups: ['operators'] },
];

const call = (over: Partial<CallPolicyInput>): CallPolicyInput => ({
  principal: 'bob',
  agent: 'ops',
  toolName: 'transfer',
  args: {},
  tier: 'auto',
  ...over,
});

const fromText = (text: string, file = 'p.cedar') =>
  CedarPolicySet.fromSources('policies', SCHEMA, [{ file, text }], PRINCIPALS);

function loadError(text: string): string {
  try {
    fromText(text);
  } catch (error) {
    expect(error).toBeInstanceOf(PolicyLoadError);
    return (error as Error).message;
  }
  throw new Error('the set loaded');
}

describe('the example policy set (config/policies)', () => {
  const sut = CedarPolicySet.load(EXAMPLE, PRINCIPALS);

  it('sends a transfer above 1,000 to finance with quorum 2, naming the policy and its condition', () => {
    expect(sut.decide(call({ args: { amount: 1500, currency: 'EUR' } }))).toEqual({
      allowed: true,
      tier: 'confirm',
      groups: ['finance'],
      quorum: 2,
      policy: {
        id: 'payments-quorum',
        condition: 'resource.tool == "transfer" && resource.args has amount && resource.args.amount > 1000',
      },
    });
  });

  it('lets a transfer of 1,000 or less run at its own tier', () => {
    expect(sut.decide(call({ args: { amount: 1000 } }))).toMatchObject({
      allowed: true,
      tier: 'auto',
      policy: { id: 'payments-small' },
    });
    expect(sut.decide(call({ args: { amount: 10 } }))).not.toHaveProperty('groups');
  });

  it('never lowers the tier the tool and the JSON tiers give', () => {
    expect(sut.decide(call({ args: { amount: 10 }, tier: 'confirm' }))).toMatchObject({ tier: 'confirm' });
  });

  it('lets a forbid beat a permit, naming the forbid', () => {
    expect(
      sut.decide(call({ principal: 'alice', toolName: 'restart_service', args: { service: 'web' } })),
    ).toMatchObject({ allowed: true, tier: 'confirm', groups: ['ops'] });
    const verdict = sut.decide(
      call({ principal: 'mallory', toolName: 'restart_service', args: { service: 'web' } }),
    );
    expect(verdict).toMatchObject({ allowed: false, policy: { id: 'no-viewers-writing' } });
    expect(!verdict.allowed && verdict.reason).toBe(
      'forbidden by policy no-viewers-writing: unless ["get_service_status", "list_services"].contains(resource.tool)',
    );
  });

  it('denies a call no permit matches', () => {
    expect(sut.decide(call({ principal: 'alice', args: { amount: 5 } }))).toEqual({
      allowed: false,
      reason: 'no Cedar policy permits it',
    });
    expect(sut.decide(call({ principal: 'stranger', args: { amount: 5 } }))).toMatchObject({
      allowed: false,
    });
  });

  it('takes the strictest of the permits that match', () => {
    expect(
      sut.decide(
        call({ principal: 'alice', toolName: 'scale_service', args: { service: 'web', replicas: 9 } }),
      ),
    ).toMatchObject({ tier: 'confirm', quorum: 2, policy: { id: 'ops-scale-up-large' } });
    expect(
      sut.decide(
        call({ principal: 'alice', toolName: 'scale_service', args: { service: 'web', replicas: 2 } }),
      ),
    ).toMatchObject({ tier: 'confirm', policy: { id: 'ops-change' } });
  });

  it.each([
    ['a fraction', { amount: 1500.5 }, /args.amount is 1500.5: Cedar reads only whole numbers/],
    ['an argument posing as an entity', { amount: { __entity: { type: 'Group', id: 'finance' } } }, /"__"/],
  ])('refuses %s it cannot read (fail closed)', (_, args, reason) => {
    const verdict = sut.decide(call({ args }));
    expect(verdict.allowed).toBe(false);
    expect(!verdict.allowed && verdict.reason).toMatch(reason);
  });

  it('refuses a call when a policy fails to evaluate, even if another permits it (fail closed)', () => {
    // The schema says Long; a tool whose argument is text makes the comparison fail at evaluation.
    const verdict = sut.decide(call({ args: { amount: 'lots' } }));
    expect(verdict).toMatchObject({ allowed: false });
    expect(!verdict.allowed && verdict.reason).toMatch(/^policy payments-\w+ failed to evaluate/);
  });
});

describe('loading', () => {
  it('reads annotations: tier, groups (comma-separated), quorum and a reason', () => {
    const sut =
      fromText(`@id("a") @tier("manual_only") @groups("finance, ops") @quorum("3") @reason("big ones")
permit (principal, action, resource);`);
    expect(sut.policy('a')).toMatchObject({
      effect: 'permit',
      tier: 'manual_only',
      groups: ['finance', 'ops'],
      quorum: 3,
      condition: 'big ones',
      line: 1,
    });
  });

  it('names a policy without @id by its file and position', () => {
    const sut = fromText(
      'permit (principal, action, resource);\nforbid (principal, action, resource);',
      'x.cedar',
    );
    expect(sut.policies.map((p) => [p.id, p.effect, p.line])).toEqual([
      ['x.cedar@0', 'permit', 1],
      ['x.cedar@1', 'forbid', 2],
    ]);
  });

  it.each([
    [
      '@tier("sometimes") permit (principal, action, resource);',
      /p.cedar:1: policy "p.cedar@0": @tier must be/,
    ],
    ['@quorum("0") permit (principal, action, resource);', /@quorum must be a whole number from 1 to 16/],
    ['@quorum("2.5") permit (principal, action, resource);', /@quorum must be/],
    ['@groups(" , ") permit (principal, action, resource);', /@groups must list/],
    ['@groups("ops") forbid (principal, action, resource);', /@groups belongs on a permit/],
    [
      '@id("a") permit (principal, action, resource);\n@id("a") permit (principal, action, resource);',
      /p.cedar:2: policy "a": the ID is used twice/,
    ],
  ])('refuses a bad annotation: %s', (text, message) => {
    expect(loadError(text)).toMatch(message);
  });

  it('refuses a syntax error, naming the file and line', () => {
    expect(
      loadError(
        'permit (principal, action, resource);\n\npermit (principal, action, resource) when { 1 + };',
      ),
    ).toMatch(/^p.cedar:3: failed to parse policies/);
  });

  it('refuses a policy the schema refuses, naming the policy and its line', () => {
    const message = loadError(`@id("ok") permit (principal, action, resource);

@id("payments-quorum")
permit (principal, action, resource)
when { resource.args has amount && resource.args.amount > "1000" };`);
    expect(message).toMatch(/^p.cedar:5: policy "payments-quorum": .*expected Long but saw String/);
  });

  it('refuses an unsafe read of an optional argument (the schema asks for `has`)', () => {
    expect(
      loadError('@id("loose") permit (principal, action, resource) when { resource.args.amount > 1 };'),
    ).toMatch(/policy "loose": .*optional attribute/);
  });
});

describe('conditionText', () => {
  it.each([
    [
      'permit (principal, action, resource) when { resource.args.amount > 1000 };',
      'resource.args.amount > 1000',
    ],
    [
      'permit (principal, action, resource)\n when {\n a }\n unless { b // "}" here\n };',
      'a and unless b // "}" here',
    ],
    [
      'forbid (principal == Principal::"m", action, resource);',
      'principal == Principal::"m", action, resource',
    ],
    ['permit (principal, action, resource);', 'every call'],
    ['permit (principal, action, resource) when { resource.tool == "a}b" };', 'resource.tool == "a}b"'],
  ])('%s → %s', (text, expected) => {
    expect(conditionText(text)).toBe(expected);
  });
});

describe('asking a call only of the policies that can apply to its tool', () => {
  const extra = `@id("typed-late")
permit (principal, action, resource)
when { resource.args has amount && resource.args.amount > 5 && resource.tool == "late" };

@id("typed-early")
@tier("confirm")
permit (principal, action, resource)
when { resource.tool == "early" && resource.args has amount && resource.args.amount > 5 };

@id("any-tool-forbid")
forbid (principal, action, resource)
when { resource.args has currency && resource.args.currency == "XXX" };`;
  const sources = [
    ...readdirSync(EXAMPLE)
      .filter((f) => f.endsWith('.cedar'))
      .map((f) => ({ file: f, text: readFileSync(join(EXAMPLE, f), 'utf8') })),
    { file: 'extra.cedar', text: extra },
  ];
  const indexed = CedarPolicySet.fromSources('p', SCHEMA, sources, PRINCIPALS);
  const whole = CedarPolicySet.fromSources('p', SCHEMA, sources, PRINCIPALS, false);

  it('knows which tools a policy can apply to from its first condition only', () => {
    expect(indexed.policy('payments-quorum')?.tools).toEqual(['transfer']);
    expect(indexed.policy('ops-read')?.tools).toEqual(['get_service_status', 'list_services']);
    expect(indexed.policy('typed-early')?.tools).toEqual(['early']);
    // The tool is not the first thing it evaluates: an error before it must still refuse any call.
    expect(indexed.policy('typed-late')?.tools).toBeUndefined();
    expect(indexed.policy('no-viewers-writing')?.tools).toBeUndefined();
  });

  it.each([
    ['bob', 'transfer', { amount: 1500 }],
    ['bob', 'transfer', { amount: 10, currency: 'XXX' }],
    ['bob', 'transfer', { amount: 'lots' }],
    ['bob', 'early', { amount: 'lots' }],
    ['bob', 'other', { amount: 'lots' }],
    ['bob', 'early', { amount: 9 }],
    ['alice', 'scale_service', { service: 'web', replicas: 9 }],
    ['alice', 'list_services', {}],
    ['mallory', 'restart_service', { service: 'web' }],
    ['stranger', 'unknown_tool', {}],
  ])('gives the same verdict as the whole set: %s calls %s %j', (principal, toolName, args) => {
    const input = call({ principal, toolName, args });
    expect(indexed.decide(input)).toEqual(whole.decide(input));
  });
});
