// A runbook run is a run of the agent worker whose "model" is the runbook interpreter: the run loop parks, resumes,
// checks decisions and runs approved calls exactly once as for any agent run, and asks this model for the next turn.
import type { ChatMessage, RunbookDefinition } from '@countersign/contracts';
import type { ChatModel, ModelReply, ModelRequest } from '../models/chat-model';
import { type AgentStepRunner, OUTPUTS_MARKER, RunbookWalk, type WalkResult } from './runbook-interpreter';

export class RunbookModel implements ChatModel {
  readonly provider = 'runbook' as const;

  constructor(
    private readonly definition: RunbookDefinition,
    private readonly lookup: (name: string) => RunbookDefinition | undefined,
    private readonly agents: AgentStepRunner,
  ) {}

  async next(request: ModelRequest): Promise<ModelReply> {
    const walked = await new RunbookWalk(this.lookup, request.messages, this.agents).walk(
      this.definition,
      runbookInput(request.messages),
    );
    const nodes = walked.events;
    const { end } = walked;
    const outputs =
      Object.keys(walked.outputs).length > 0 ? OUTPUTS_MARKER + JSON.stringify(walked.outputs) : undefined;
    switch (end.kind) {
      case 'calls':
        return { kind: 'tool_calls', calls: end.calls, ...(outputs ? { text: outputs } : {}), nodes };
      case 'completed':
        return {
          kind: 'text',
          text: `Runbook ${this.definition.name} completed. State: ${JSON.stringify(end.state)}`,
          nodes,
        };
      case 'failed':
        return {
          kind: 'text',
          text: `Runbook ${this.definition.name} failed: ${end.reason}`,
          failed: true,
          nodes,
        };
      case 'waiting':
        // Cannot happen in a turn (every call has its result when the model is asked): fail closed.
        return {
          kind: 'text',
          text: `Runbook ${this.definition.name} failed: no step could go on`,
          failed: true,
          nodes,
        };
    }
  }
}

/** A runbook run's input is its starting state as JSON (POST /runbooks/:name/runs writes it). */
export function runbookInput(messages: ChatMessage[]): Record<string, unknown> {
  const first = messages.find((m) => m.role === 'user');
  try {
    const parsed = JSON.parse(first?.content ?? '{}') as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The run's graph position and each node's state, read from its history (no agent is asked anything). */
export async function readRunbook(
  definition: RunbookDefinition,
  lookup: (name: string) => RunbookDefinition | undefined,
  messages: ChatMessage[],
): Promise<WalkResult> {
  return new RunbookWalk(lookup, messages).walk(definition, runbookInput(messages));
}
