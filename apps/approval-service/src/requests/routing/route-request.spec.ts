import { ApprovalsConfigSchema } from '../../config/approvals-config.schema';
import { possibleRoutes, routeRequest, type CallPattern } from './route-request';
import { globsMayOverlap, matchesGlob } from './glob';
import { approvalRequest } from '../__fixtures__/approval-request';

const request = approvalRequest;

const groups = [
  { id: 'ops', members: ['bob'] },
  { id: 'payments', members: ['carol'] },
];
const config = (extra: object) => ApprovalsConfigSchema.parse({ groups, ...extra });
const fallback = { expiresInMs: 1_800_000 };

describe('routeRequest with a Cedar policy', () => {
  const rules = [{ name: 'payments', match: { args: { service: 'payments*' } }, groups: ['payments'] }];
  const policy = { id: 'payments-quorum', condition: 'resource.args.amount > 1000' };

  it('routes to the groups and quorum the policy named, the policy as the route and its condition as why', () => {
    const route = routeRequest(
      request({ args: { service: 'web' }, policy: { ...policy, groups: ['ops'], quorum: 2 } }),
      config({ rules }),
      fallback,
    );
    expect(route).toMatchObject({
      rule: 'policy payments-quorum',
      why: 'resource.args.amount > 1000',
      groups: ['ops'],
      quorum: 2,
    });
  });

  it("keeps the rule's groups when the policy named none, saying which rule chose them", () => {
    const route = routeRequest(request({ policy }), config({ rules }), fallback);
    expect(route).toMatchObject({ rule: 'policy payments-quorum', groups: ['payments'], quorum: 1 });
    expect(route!.why).toBe(
      'resource.args.amount > 1000; people from payments: args.service "payments-api" matches "payments*"',
    );
  });

  it('routes nowhere (fail closed) when the policy names a group the config does not know', () => {
    expect(
      routeRequest(request({ policy: { ...policy, groups: ['finance'] } }), config({ rules }), fallback),
    ).toBeUndefined();
  });
});

describe('routeRequest with an admission hook', () => {
  const rules = [
    { name: 'payments', match: { args: { service: 'payments*' } }, groups: ['payments'], quorum: 2 },
  ];

  it("gives the request to the hook's groups, with the higher quorum, saying so", () => {
    const route = routeRequest(
      request({ admission: { hook: 'gate', groups: ['ops'], quorum: 1 } }),
      config({ rules }),
      fallback,
    );
    expect(route).toMatchObject({ rule: 'payments + admission hook gate', groups: ['ops'], quorum: 2 });
    expect(route!.why).toMatch(/admission hook gate asked for people \(groups ops, quorum 1\)$/);
    expect(
      routeRequest(request({ admission: { hook: 'gate', quorum: 3 } }), config({ rules }), fallback),
    ).toMatchObject({ groups: ['payments'], quorum: 3 });
  });

  it('routes by the named groups when no rule matches and there is no default group', () => {
    const route = routeRequest(
      request({ args: { service: 'web' }, admission: { hook: 'gate', groups: ['payments'] } }),
      config({ rules }),
      fallback,
    );
    expect(route).toMatchObject({ groups: ['payments'], quorum: 1 });
  });

  it('routes nowhere (fail closed) when the hook names a group the config does not know, or names none and no rule matches', () => {
    expect(
      routeRequest(
        request({ admission: { hook: 'gate', groups: ['finance'] } }),
        config({ rules }),
        fallback,
      ),
    ).toBeUndefined();
    expect(
      routeRequest(
        request({ args: { service: 'web' }, admission: { hook: 'gate' } }),
        config({ rules }),
        fallback,
      ),
    ).toBeUndefined();
  });
});

describe('routeRequest', () => {
  const rules = [
    {
      name: 'payments',
      match: { args: { service: 'payments*' } },
      groups: ['payments'],
      quorum: 2,
      expiresIn: '5m',
    },
    { name: 'eu', match: { args: { 'target.region': 'eu-*' }, tier: 'confirm' }, groups: ['ops'] },
    { name: 'deletes', match: { tool: ['delete_*', 'drop_*'] }, groups: ['ops'], channels: ['web'] },
    { name: 'alice-on-billing', match: { agent: 'billing', requester: 'al?ce' }, groups: ['payments'] },
  ];

  it.each([
    ['an argument glob', request(), 'payments'],
    [
      'a nested argument path and tier',
      request({ args: { service: 'web', target: { region: 'eu-2' } } }),
      'eu',
    ],
    ['one of several tool globs', request({ toolName: 'drop_table', args: {} }), 'deletes'],
    ['agent and requester globs', request({ agent: 'billing', args: {} }), 'alice-on-billing'],
  ])('routes by %s', (_what, req, rule) => {
    expect(routeRequest(req, config({ rules }), fallback)?.rule).toBe(rule);
  });

  it('takes quorum, channels and expiry from the rule, with defaults for the rest', () => {
    expect(routeRequest(request(), config({ rules }), fallback)).toEqual({
      rule: 'payments',
      why: 'args.service "payments-api" matches "payments*"',
      groups: ['payments'],
      channels: ['slack', 'email', 'web'],
      quorum: 2,
      expiresInMs: 300_000,
      escalation: undefined,
    });
  });

  it.each([
    [
      'every condition with the value it matched',
      request({ agent: 'billing', args: {} }),
      'agent billing matches "billing" and requester alice matches "al?ce"',
    ],
    [
      'a nested argument and the tier',
      request({ args: { service: 'web', target: { region: 'eu-2' } } }),
      'tier is confirm and args.target.region "eu-2" matches "eu-*"',
    ],
    [
      'one of several tool globs',
      request({ toolName: 'drop_table', args: {} }),
      'tool drop_table matches "delete_*" or "drop_*"',
    ],
  ])('says why a rule matched: %s', (_what, req, why) => {
    expect(routeRequest(req, config({ rules }), fallback)?.why).toBe(why);
  });

  it('says when the default group decides because no rule matched', () => {
    const route = routeRequest(request({ args: {} }), config({ rules, defaultGroup: 'ops' }), fallback);
    expect(route?.why).toBe('no rule matched, so the default group decides');
  });

  it('does not match an argument that is missing or not a scalar', () => {
    const cfg = config({ rules: [{ match: { args: { target: '*' } }, groups: ['ops'] }] });
    expect(routeRequest(request(), cfg, fallback)).toBeUndefined();
    expect(routeRequest(request({ args: {} }), cfg, fallback)).toBeUndefined();
  });

  it('sends an unmatched request to the default group', () => {
    const route = routeRequest(request({ args: {} }), config({ rules, defaultGroup: 'ops' }), fallback);
    expect(route).toMatchObject({ rule: 'defaultGroup', groups: ['ops'], quorum: 1, expiresInMs: 1_800_000 });
  });

  it('finds no route when nothing matches and there is no default group', () => {
    expect(routeRequest(request({ args: {} }), config({ rules }), fallback)).toBeUndefined();
  });

  it('carries the escalation of the rule', () => {
    const cfg = config({ rules: [{ groups: ['ops'], escalation: { after: '10m', groups: ['payments'] } }] });
    expect(routeRequest(request(), cfg, fallback)?.escalation).toEqual({
      afterMs: 600_000,
      groups: ['payments'],
    });
  });
});

describe('possibleRoutes', () => {
  const rules = [
    { name: 'payments', match: { args: { service: 'payments*' } }, groups: ['payments'], quorum: 2 },
    { name: 'billing agent', match: { agent: 'billing' }, groups: ['payments'], quorum: 3 },
    { name: 'web', match: { args: { service: ['web', 'api'] } }, groups: ['ops'] },
    { name: 'deletes', match: { tool: 'delete_*' }, groups: ['ops'], quorum: 2 },
    { name: 'manual', match: { tier: 'manual_only' }, groups: ['ops'], quorum: 2 },
  ];
  const pattern = (args: CallPattern['args'] = {}): CallPattern => ({
    toolName: 'scale_service',
    tier: 'confirm',
    requester: 'alice',
    args,
  });
  const names = (p: CallPattern, defaultGroup?: string) =>
    possibleRoutes(p, config({ rules, ...(defaultGroup ? { defaultGroup } : {}) }), fallback).map(
      (r) => r.rule,
    );

  it.each<[string, CallPattern['args'], string[]]>([
    [
      'every rule an open argument could match, and the default',
      {},
      ['payments', 'billing agent', 'web', 'defaultGroup'],
    ],
    ['not a rule whose argument glob the pattern excludes', { service: 'web' }, ['billing agent', 'web']],
    [
      'a rule whose glob may overlap the pattern’s',
      { service: 'pay*' },
      ['payments', 'billing agent', 'defaultGroup'],
    ],
    ['not one whose fixed beginning differs', { service: 'search*' }, ['billing agent', 'defaultGroup']],
  ])('lists %s', (_what, args, expected) => {
    expect(names(pattern(args), 'ops')).toEqual(expected);
  });

  it('stops at a rule every covered call matches (no agent condition, literal arguments it matches)', () => {
    const cfg = config({ rules: [rules[2], rules[0]], defaultGroup: 'ops' });
    expect(possibleRoutes(pattern({ service: 'api' }), cfg, fallback).map((r) => r.rule)).toEqual(['web']);
  });

  it('leaves out rules of another tool or tier, and the default group when there is none', () => {
    expect(names(pattern({ service: 'db' }))).toEqual(['billing agent']);
  });
});

describe('globsMayOverlap', () => {
  it.each([
    ['web', 'web', true],
    ['web', 'api', false],
    ['payments-eu', 'payments*', true],
    ['pay*', 'payments*', true],
    ['web*', 'payments*', false],
    ['*-eu', '*-us', false],
    ['a*b', 'a*c*b', true],
  ])('%s and %s → %s', (a, b, expected) => {
    expect(globsMayOverlap(a, b)).toBe(expected);
    expect(globsMayOverlap(b, a)).toBe(expected);
  });
});

describe('matchesGlob', () => {
  it.each([
    ['payments-api', 'payments*', true],
    ['payments', 'payments*', true],
    ['my-payments', 'payments*', false],
    ['a.b', 'a?b', true],
    ['a.b', 'a.b', true],
    ['axb', 'a.b', false],
  ])('%s against %s → %s', (value, glob, expected) => {
    expect(matchesGlob(value, glob)).toBe(expected);
  });
});

describe('ApprovalsConfigSchema', () => {
  it('names an unknown group in a rule', () => {
    const parsed = ApprovalsConfigSchema.safeParse({ groups, rules: [{ groups: ['nobody'] }] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ['rules', 0, 'groups', 0],
      message: 'unknown group "nobody"',
    });
  });

  it('refuses two groups with the same ID', () => {
    const parsed = ApprovalsConfigSchema.safeParse({
      groups: [...groups, { id: 'ops', members: ['carol'] }],
    });
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['groups', 2, 'id'], message: 'must be unique' });
  });
});
