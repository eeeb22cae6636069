// Where a runbook call sits, in words approvers read on every channel: `step 3 of 7 of payments-failover`, and for a
// call inside a sub-runbook `step 2 of 4 of rollout › step 1 of 2 of restart-one`. Steps count in definition order.
import type { RunbookDefinition } from '@countersign/contracts';
import { own } from './own';
import { nodePathOf } from './runbook-interpreter';

export function describeStep(
  root: RunbookDefinition,
  lookup: (name: string) => RunbookDefinition | undefined,
  callId: string,
): string | undefined {
  const path = nodePathOf(callId);
  if (!path) return undefined;
  const parts: string[] = [];
  let definition: RunbookDefinition | undefined = root;
  for (const id of path) {
    if (!definition) return undefined;
    const ids = Object.keys(definition.nodes);
    const index = ids.indexOf(id);
    if (index < 0) return undefined;
    const node: RunbookDefinition['nodes'][string] = own(definition.nodes, id)!;
    // A parallel node's branches are nodes of the same runbook (their paths pass through it): counted on their own.
    if (node.kind === 'parallel') continue;
    parts.push(`step ${index + 1} of ${ids.length} of ${definition.name}`);
    definition = node.kind === 'runbook' ? lookup(node.runbook) : undefined;
  }
  return parts.join(' › ');
}
