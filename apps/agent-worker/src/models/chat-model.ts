// What the run loop needs from a model: given the conversation and the tools, the next turn.
import type { ChatMessage, NodeStatus, ScriptTurn } from '@countersign/contracts';

export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  systemPrompt: string;
  messages: ChatMessage[];
  tools: ModelTool[];
  /** Only for the scripted model: the turns given in `POST /runs`. */
  script?: (ScriptTurn | null)[];
}

export interface ModelToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** A runbook node's transition, reported with the turn it happened in (the runbook interpreter only). */
export interface NodeTransition {
  node: string;
  status: NodeStatus;
  callId?: string;
}

/**
 * `text` of a tool-calls reply: what the model wrote before asking for the calls, when it wrote anything.
 * `failed` (runbooks): the run ends as failed, with the text as its error. `nodes`: transitions the run's followers hear.
 */
export type ModelReply =
  | { kind: 'text'; text: string; failed?: boolean; nodes?: NodeTransition[] }
  | { kind: 'tool_calls'; calls: ModelToolCall[]; text?: string; nodes?: NodeTransition[] };

export interface ChatModel {
  readonly provider: 'scripted' | 'openai' | 'runbook';
  next(request: ModelRequest): Promise<ModelReply>;
}
