// The OpenAI Agents SDK peer: a bare `needsApproval` loop — run until the tool call is an interruption, keep the
// serialized RunState in Redis, and on the decision load it, approve, run again. The model is scripted (no network):
// it asks for restart_service once, then answers with text once the tool's result is in its input.
import { randomUUID } from 'node:crypto';
import {
  Agent,
  run,
  RunState,
  setTracingDisabled,
  tool,
  Usage,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';
import { assistantMessage, functionCall } from '@openai/agents/testing';
import { z } from 'zod';
import type { PeerContext, PeerLoop } from './peer-worker';
import { PEER_TOOL } from './peer-worker';

interface RunContext {
  runId: string;
}

/** Asks for the tool until its result is in the input, then answers. */
class ScriptedModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input = Array.isArray(request.input) ? request.input : [];
    const answered = input.some((item) => item.type === 'function_call_result');
    const output = answered
      ? [assistantMessage('restarted')]
      : [functionCall(PEER_TOOL, { service: 'api' }, { callId: `call-${randomUUID()}` })];
    return { usage: new Usage(), output };
  }

  getStreamedResponse(): never {
    throw new Error('the bench runs the peer without streaming');
  }
}

export async function openAiAgentsLoop(context: PeerContext): Promise<PeerLoop> {
  setTracingDisabled(true); // no exporter, no network
  const restartService = tool({
    name: PEER_TOOL,
    description: 'Restarts a service',
    parameters: z.object({ service: z.string() }),
    needsApproval: true,
    execute: async ({ service }, runContext, details) => {
      const { runId } = runContext!.context as RunContext;
      context.toolEntered(runId, details?.toolCall?.callId ?? '');
      return `restarted ${service}`;
    },
  });
  const agent = new Agent<RunContext>({
    name: 'ops',
    instructions: 'Operate the services.',
    model: new ScriptedModel(),
    tools: [restartService],
  });
  const stateKey = (runId: string) => `${context.env.KEY_PREFIX}:run-state:${runId}`;

  return {
    async start(runId) {
      const paused = await run(agent, 'restart the api service', { context: { runId } });
      const waiting = paused.interruptions[0]?.rawItem;
      if (waiting?.type !== 'function_call') throw new Error(`run ${runId} did not pause for approval`);
      await context.redis.set(stateKey(runId), paused.state.toString());
      return waiting.callId;
    },
    async resume(runId) {
      const saved = await context.redis.get(stateKey(runId));
      if (saved === null) throw new Error(`run ${runId}: no saved state`);
      const state = await RunState.fromString(agent, saved);
      for (const interruption of state.getInterruptions()) state.approve(interruption);
      const done = await run(agent, state);
      await context.redis.del(stateKey(runId));
      return done.finalOutput === 'restarted' ? 'completed' : 'failed';
    },
    async close() {},
  };
}
