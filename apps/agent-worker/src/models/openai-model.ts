// An OpenAI-compatible chat-completions model (any server speaking that API: OpenAI, vLLM, Ollama, ...).
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ChatMessage } from '@countersign/contracts';
import type { ChatModel, ModelReply, ModelRequest } from './chat-model';
import { newCallId } from './scripted-model';

export interface OpenAiModelOptions {
  apiKey: string;
  model: string;
  baseURL?: string;
  temperature?: number;
}

export class OpenAiModel implements ChatModel {
  readonly provider = 'openai' as const;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiModelOptions) {
    // Retries belong to the queue (the job is retried with backoff), not to the client.
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      maxRetries: 0,
      timeout: 120_000,
    });
  }

  async next(request: ModelRequest): Promise<ModelReply> {
    const completion = await this.client.chat.completions.create({
      model: this.options.model,
      temperature: this.options.temperature,
      messages: [{ role: 'system', content: request.systemPrompt }, ...request.messages.map(toOpenAi)],
      tools: request.tools.map((t) => ({ type: 'function' as const, function: t })),
    });
    const message = completion.choices[0]?.message;
    if (!message) throw new Error('the model returned no choice');
    const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function');
    if (calls.length === 0) return { kind: 'text', text: message.content ?? '' };
    return {
      kind: 'tool_calls',
      ...(message.content?.trim() ? { text: message.content } : {}),
      calls: calls.map((c) => ({
        id: c.id || newCallId(),
        name: c.function.name,
        args: parseArguments(c.function.arguments),
      })),
    };
  }
}

/**
 * Arguments arrive as a JSON string. Anything but a JSON object is kept under a key no tool accepts
 * (tool schemas are strict), so the pipeline refuses the call and tells the model why.
 */
export function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { $unparsed_arguments: text };
}

function toOpenAi(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: JSON.stringify(c.args) },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}
