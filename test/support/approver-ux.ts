// The approvals config of the approver-experience tests: carol writes standing rules; payments* calls need two
// approvers of finance (carol, dave); everything else goes to ops (bob, carol), over Slack, email and the web.
import { approvalsConfig, approver, group, PAYMENTS_NEED_TWO } from './fixtures';

export const UX_APPROVALS = approvalsConfig({
  approvers: [
    approver('bob', { name: 'Bob Builder' }),
    approver('carol', { name: 'Carol Ops', roles: ['rule-writer'] }),
    approver('dave', { name: 'Dave Finance' }),
  ],
  groups: [
    group('ops', ['bob', 'carol'], '#ops-approvals'),
    group('finance', ['carol', 'dave'], '#finance-approvals'),
  ],
  rules: [PAYMENTS_NEED_TWO],
  defaults: { channels: ['slack', 'email', 'web'], expiresIn: '30m' },
});
