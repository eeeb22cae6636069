// A deterministic model for the demo, tests and benchmarks: it plays the script given with the run,
// or, without one, a small ops runbook (list services, restart the unhealthy ones, report).
import { randomBytes } from 'node:crypto';
import type { ChatMessage, ScriptTurn } from '@countersign/contracts';
import type { ChatModel, ModelReply, ModelRequest } from './chat-model';

export function newCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export class ScriptedModel implements ChatModel {
  readonly provider = 'scripted' as const;

  async next(request: ModelRequest): Promise<ModelReply> {
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    if (request.script) return playScript(request.script, turn, request.messages);
    return defaultRunbook(turn, request.messages);
  }
}

/** Turns already played may be null (a parked run keeps only the rest); `turn` never goes back to them. */
function playScript(script: (ScriptTurn | null)[], turn: number, messages: ChatMessage[]): ModelReply {
  const step = script[turn];
  if (!step) return { kind: 'text', text: summary(messages) };
  if (!('toolCalls' in step)) return { kind: 'text', text: step.text };
  return {
    kind: 'tool_calls',
    calls: step.toolCalls.map((c) => ({ id: c.id ?? newCallId(), name: c.name, args: c.args })),
    ...(step.text ? { text: step.text } : {}),
  };
}

function defaultRunbook(turn: number, messages: ChatMessage[]): ModelReply {
  if (turn === 0)
    return { kind: 'tool_calls', calls: [{ id: newCallId(), name: 'list_services', args: {} }] };
  if (turn === 1) {
    const unhealthy = unhealthyServices(lastToolContents(messages)[0]);
    if (unhealthy.length === 0) return { kind: 'text', text: 'All services are healthy; nothing to do.' };
    return {
      kind: 'tool_calls',
      calls: unhealthy.map((service) => ({ id: newCallId(), name: 'restart_service', args: { service } })),
    };
  }
  return { kind: 'text', text: summary(messages) };
}

function unhealthyServices(listing: string | undefined): string[] {
  try {
    const services = JSON.parse(listing ?? '[]') as { name: string; status: string }[];
    return services.filter((s) => s.status !== 'healthy').map((s) => s.name);
  } catch {
    return [];
  }
}

/** Contents of the tool messages that follow the last assistant message. */
function lastToolContents(messages: ChatMessage[]): string[] {
  const contents: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--) {
    const message = messages[i];
    if (message.role === 'tool') contents.unshift(message.content);
  }
  return contents;
}

function summary(messages: ChatMessage[]): string {
  const results = lastToolContents(messages);
  return results.length ? `Done. Last results: ${results.join(' | ')}` : 'Done.';
}
