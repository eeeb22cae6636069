// What the run loop needs from a model: given the conversation and the tools, the next turn.
import type { ChatMessage, ScriptTurn } from '@countersign/contracts';

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

/** `text` of a tool-calls reply: what the model wrote before asking for the calls, when it wrote anything. */
export type ModelReply =
  { kind: 'text'; text: string } | { kind: 'tool_calls'; calls: ModelToolCall[]; text?: string };

export interface ChatModel {
  readonly provider: 'scripted' | 'openai';
  next(request: ModelRequest): Promise<ModelReply>;
}
