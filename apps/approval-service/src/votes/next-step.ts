// What happens after a vote, in words for the approver who cast it: every channel says the same (the REST API and the
// CLI, Slack's ephemeral reply, the email link's page, the inbox).
import type { DecisionValue } from '@countersign/contracts';
import type { RevisionRoute } from '../requests/approval-types';
import { routeName } from '../requests/approval-context';
import type { VoteOutcome } from './votes.service';

/** What happens after a vote, in words for the approver who cast it (every channel says the same). */
export function nextStep(
  result: VoteOutcome,
  toolName: string,
  vote: { decision: DecisionValue; reason?: string; edited?: boolean },
): string {
  const moved = result.rerouted ? `${routedAnew(result.rerouted)} ` : '';
  if (result.status === 'rerouted')
    return `${moved}You are not one of its approvers, so your approval does not count. They are asked now; nothing runs until they approve the edited call.`;
  if (result.status === 'vote_recorded') {
    const left = result.quorum - result.approvals;
    const more = `${left} more approver${left === 1 ? '' : 's'}`;
    return result.editedNow
      ? `${moved}Your edit and approval are counted (1 of ${result.quorum}). The other approvers are asked about the edited call; it runs once ${more} approve${left === 1 ? 's' : ''} it.`
      : `Counted (${result.approvals} of ${result.quorum}). The call runs once ${more} approve${left === 1 ? 's' : ''} it.`;
  }
  if (result.outcome.decision === 'respond')
    return `Responded. ${toolName} does not run; the agent is given your response as its result, naming you, and re-plans.`;
  if (result.outcome.decision === 'deny')
    return `Denied. The agent is told${vote.reason ? ', with your reason,' : ''} and does not run ${toolName}; it may try something else.`;
  const edited = result.outcome.args ? ' with the edited arguments' : '';
  return `${moved}Approved. The agent runs ${toolName}${edited} now, once; its result shows in History.`;
}

/** "Your edit routed the call anew: rule “payments need two approvers” sends it to finance (2 approvers)." */
export function routedAnew(route: Pick<RevisionRoute, 'rule' | 'groups' | 'quorum'>): string {
  const approvers = route.quorum > 1 ? ` (${route.quorum} approvers)` : '';
  return `Your edit routed the call anew: ${routeName(route.rule)} sends it to ${route.groups.join(', ')}${approvers}.`;
}
