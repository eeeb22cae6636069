// The approvals config of the approver-experience tests: carol writes standing rules; payments* calls need two
// approvers of finance (carol, dave); everything else goes to ops (bob, carol), over Slack, email and the web.
export const UX_APPROVALS = {
  approvers: [
    {
      id: 'bob',
      name: 'Bob Builder',
      email: 'bob@example.test',
      slackUserId: 'U_BOB',
      apiToken: 'bob-ux-token-0123456789',
    },
    {
      id: 'carol',
      name: 'Carol Ops',
      email: 'carol@example.test',
      slackUserId: 'U_CAROL',
      apiToken: 'carol-ux-token-0123456789',
      roles: ['rule-writer' as const],
    },
    {
      id: 'dave',
      name: 'Dave Finance',
      email: 'dave@example.test',
      slackUserId: 'U_DAVE',
      apiToken: 'dave-ux-token-0123456789',
    },
  ],
  groups: [
    { id: 'ops', members: ['bob', 'carol'], slackChannel: '#ops-approvals' },
    { id: 'finance', members: ['carol', 'dave'], slackChannel: '#finance-approvals' },
  ],
  rules: [
    {
      name: 'payments need two approvers',
      match: { args: { service: 'payments*' } },
      groups: ['finance'],
      quorum: 2,
    },
  ],
  defaultGroup: 'ops',
  defaults: { channels: ['slack', 'email', 'web'], expiresIn: '30m' },
};
