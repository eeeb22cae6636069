// The approvers, groups and approvals configs the tests share, so a spec says only what it changes. An approver here is
// a principal of the tests' directory (principals.ts) with its default test token: wherever bob approves, he signs in
// with testToken('bob') (bearer('bob')), whichever spec started the service.
import { testToken, type TestApprover } from './principals';

/** An approver of the fixtures: every one has a name, an email address, a Slack user and a token. */
export type FixtureApprover = TestApprover & Required<Pick<TestApprover, 'email' | 'slackUserId'>>;

/** bob → "Bob", bob@example.test, Slack user U_BOB, the default test token; `over` changes any of them. */
export function approver(id: string, over: Partial<Omit<FixtureApprover, 'id'>> = {}): FixtureApprover {
  return {
    id,
    name: id[0].toUpperCase() + id.slice(1),
    email: `${id}@example.test`,
    slackUserId: `U_${id.toUpperCase()}`,
    apiToken: testToken(id),
    ...over,
  };
}

export const approvers = (...ids: string[]): FixtureApprover[] => ids.map((id) => approver(id));

/** `Authorization` of an approver of these fixtures (its default test token). */
export const asApprover = (id: string) => ({ Authorization: `Bearer ${testToken(id)}` });

export interface TestGroup {
  id: string;
  members: string[];
  slackChannel?: string;
}

/** An approver group; its requests are posted in `slackChannel` when Slack is on. */
export function group(id: string, members: string[], slackChannel?: string): TestGroup {
  return { id, members, ...(slackChannel ? { slackChannel } : {}) };
}

/** The rule of issue 24, finding 1: a call of a payments service goes to finance, where it needs two approvers. */
export const PAYMENTS_NEED_TWO = {
  name: 'payments need two approvers',
  match: { args: { service: 'payments*' } },
  groups: ['finance'],
  quorum: 2,
};

/** An approvals config as the tests write it: the approvers (with tokens) beside the groups and rules. */
export interface TestApprovalsConfig {
  approvers: FixtureApprover[];
  groups: TestGroup[];
  rules?: object[];
  /** Decides a request no rule matches; undefined: such a request has no route (denied at once). */
  defaultGroup?: string;
  defaults?: { channels?: string[]; expiresIn?: string };
  /** Admission hooks of the approvals API (`admission.beforeTool`). */
  admission?: { beforeTool: object[] };
}

/** bob and carol decide everything, as the group ops (the default group); `over` says what a spec changes. */
export function approvalsConfig(over: Partial<TestApprovalsConfig> = {}): TestApprovalsConfig {
  return {
    approvers: approvers('bob', 'carol'),
    groups: [group('ops', ['bob', 'carol'])],
    defaultGroup: 'ops',
    ...over,
  };
}
