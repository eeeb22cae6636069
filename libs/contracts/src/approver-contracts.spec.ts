// The contracts the approver features added: bodies that must name their bad field, and the bounded excerpts.
import { excerpt } from './approval-request.schema';
import { DecisionBodySchema, DecisionSchema } from './decision.schema';
import { NewStandingRuleSchema, STANDING_RULE_EXPIRY } from './standing-rules.schema';

const issues = (result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) => result.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

describe('excerpt', () => {
  it.each([
    ['  two\n\nlines  ', 10, 'two lines'],
    ['exactly ten', 11, 'exactly ten'],
    ['a longer sentence', 9, 'a longer…'],
    ['   ', 10, undefined],
    [null, 10, undefined],
  ])('%j within %i → %j', (text, max, expected) => {
    expect(excerpt(text, max)).toBe(expected);
  });
});

describe('NewStandingRuleSchema', () => {
  it('takes a suggestion to accept, or a tool and a requester, with an expiry from 1h to 90d', () => {
    expect(NewStandingRuleSchema.parse({ fromCallId: 'call-1' })).toEqual({ fromCallId: 'call-1' });
    expect(
      NewStandingRuleSchema.parse({
        tool: 'restart_service',
        requester: 'alice',
        expiresIn: '90d',
        args: { service: 'web*' },
      }),
    ).toMatchObject({ expiresIn: STANDING_RULE_EXPIRY.maxMs });
  });

  it.each([
    [{}, ['tool: is required (or send fromCallId to accept a trust suggestion)']],
    [
      { tool: 'restart_service' },
      ['requester: is required (or send fromCallId to accept a trust suggestion)'],
    ],
    [
      { fromCallId: 'c', tool: 'restart_service' },
      [
        'fromCallId: send either fromCallId (accept a suggestion) or tool and requester (write a rule), not both',
      ],
    ],
    [{ tool: 'x', requester: 'a', expiresIn: '30m' }, ['expiresIn: must be from 1h to 90d']],
    [{ tool: 'x', requester: 'a', expiresIn: 'soon' }, ['expiresIn: must be a duration such as 12h or 7d']],
    [
      { tool: 'x', requester: 'a', args: { '../x': 'y' } },
      ['args.../x: must be an argument path such as service or target.region'],
    ],
    [{ tool: 'x', requester: 'a', tier: 'auto' }, [': Unrecognized key: "tier"']],
  ])('refuses %j naming the field', (body, expected) => {
    expect(issues(NewStandingRuleSchema.safeParse(body))).toEqual(expected);
  });
});

describe('DecisionBodySchema', () => {
  it('takes edited arguments only with an approval', () => {
    expect(DecisionBodySchema.safeParse({ decision: 'approve', args: { replicas: 4 } }).success).toBe(true);
    expect(issues(DecisionBodySchema.safeParse({ decision: 'deny', args: { replicas: 4 } }))).toEqual([
      'args: edited arguments come only with decision "approve"',
    ]);
  });
});

describe('DecisionBodySchema: respond', () => {
  it('takes a respond with its text, trimmed', () => {
    expect(DecisionBodySchema.parse({ decision: 'respond', response: '  canary first  ' })).toEqual({
      decision: 'respond',
      response: 'canary first',
    });
  });

  it.each([
    [
      'no text',
      { decision: 'respond' },
      'response: decision "respond" needs a response: the text the agent is given instead of running the call',
    ],
    [
      'blank text',
      { decision: 'respond', response: '   ' },
      'response: must not be empty: say what the agent should do instead',
    ],
    [
      '4,001 characters',
      { decision: 'respond', response: 'x'.repeat(4_001) },
      'response: must be at most 4000 characters',
    ],
    [
      'a text with a deny',
      { decision: 'deny', response: 'no' },
      'response: a response comes only with decision "respond"',
    ],
  ])('refuses %s, naming the field', (_case, body, problem) => {
    expect(issues(DecisionBodySchema.safeParse(body))).toEqual([problem]);
  });

  it('takes 4,000 characters', () => {
    expect(DecisionBodySchema.safeParse({ decision: 'respond', response: 'x'.repeat(4_000) }).success).toBe(
      true,
    );
  });
});

describe('DecisionSchema', () => {
  it('keeps a decision without the added fields exactly as it was (signatures of earlier decisions still verify)', () => {
    const decision = {
      requestId: 'rq',
      callId: 'c',
      runId: 'r',
      decision: 'approve',
      decidedBy: 'person',
      approvers: ['bob'],
      fingerprint: 'a'.repeat(64),
      shown: { toolName: 't', args: {} },
      attempt: 0,
      decidedAt: new Date(0).toISOString(),
    };
    expect(Object.keys(DecisionSchema.parse(decision))).toEqual(Object.keys(decision));
  });
});
