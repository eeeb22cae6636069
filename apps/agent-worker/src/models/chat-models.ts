// Which model each agent talks to: the scripted one, or an OpenAI-compatible provider with the OPENAI_* defaults
// (an agent may override the model, base URL and temperature). Runbook agents get theirs from the agent catalog.
import { Inject, Injectable } from '@nestjs/common';
import type { AgentConfig } from '../config/agents-config.schema';
import { WORKER_CONFIG, type WorkerConfig } from '../config/worker-config';
import type { ChatModel } from './chat-model';
import { OpenAiModel } from './openai-model';
import { ScriptedModel } from './scripted-model';

/** An agent's model, or why it has none (it then cannot run: its runs fail saying so). */
export type AgentModel = { model: ChatModel; unavailable?: never } | { model?: never; unavailable: string };

@Injectable()
export class ChatModels {
  constructor(@Inject(WORKER_CONFIG) private readonly config: Pick<WorkerConfig, 'env'>) {}

  forAgent(agent: AgentConfig): AgentModel {
    if (agent.model.provider === 'scripted') return { model: new ScriptedModel() };
    const { OPENAI_API_KEY, OPENAI_MODEL, OPENAI_BASE_URL } = this.config.env;
    if (!OPENAI_API_KEY) return { unavailable: 'its model provider is openai and OPENAI_API_KEY is not set' };
    return {
      model: new OpenAiModel({
        apiKey: OPENAI_API_KEY,
        model: agent.model.model ?? OPENAI_MODEL,
        baseURL: agent.model.baseUrl ?? OPENAI_BASE_URL,
        temperature: agent.model.temperature,
      }),
    };
  }
}
