import { keepsRoute } from './vote-check';

describe('keepsRoute', () => {
  const stored = { groups: ['ops'], quorum: 1 };
  it.each([
    ['the same groups and quorum', stored, { groups: ['ops'], quorum: 1 }, true],
    ['another quorum', stored, { groups: ['ops'], quorum: 2 }, false],
    ['other groups', stored, { groups: ['finance'], quorum: 1 }, false],
    ['more groups', stored, { groups: ['ops', 'finance'], quorum: 1 }, false],
    [
      'the same route on a request it escalated already',
      { groups: ['ops', 'leads'], quorum: 1 },
      { groups: ['ops'], quorum: 1, escalation: { afterMs: 1, groups: ['leads'] } },
      true,
    ],
    [
      'a route without that escalation on an escalated request',
      { groups: ['ops', 'leads'], quorum: 1 },
      { groups: ['ops'], quorum: 1 },
      false,
    ],
  ])('%s → %s', (_what, approval, route, kept) => {
    expect(keepsRoute(approval, route)).toBe(kept);
  });
});
