// The audit entries of a tool's execution, the same for every tool source: `started` before a call a person or a policy
// approved is handed to its tool, then how it ended (`executed`, or `failed` with the tool's error).
import type { AuditInput } from '@countersign/audit';

export type ExecutionStage = 'started' | 'executed' | 'failed';

export function executionEntry(
  runId: string,
  call: { id: string; name: string },
  approvedBy: string,
  stage: ExecutionStage,
  detail: Record<string, unknown> = {},
): AuditInput {
  return {
    type: `tool.${stage}`,
    runId,
    callId: call.id,
    actor: approvedBy,
    detail: { toolName: call.name, ...detail },
  };
}
