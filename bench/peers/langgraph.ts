// The LangGraph.js peer: the human-in-the-loop graph of LangGraph's guides — model → approval (`interrupt()`) → tools
// (each tool call invoked as @langchain/core's tool, which answers its ToolMessage) → model — checkpointed in PostgreSQL by @langchain/langgraph-checkpoint-postgres, one thread per
// run. The model is scripted (no network): it asks for restart_service once, then answers with text.
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { Pool } from 'pg';
import { z } from 'zod';
import type { PeerContext, PeerLoop } from './peer-worker';
import { PEER_TOOL } from './peer-worker';

type Config = { configurable?: { thread_id?: string } };

const last = (messages: BaseMessage[]) => messages[messages.length - 1];
const threadOf = (config: Config) => String(config.configurable?.thread_id);

/** The scripted model's call ID for a run: known to the approval node and the stand-in alike. */
const callIdOf = (runId: string) => `call-${runId}`;

export async function langGraphLoop(context: PeerContext): Promise<PeerLoop> {
  // Connections stay open (idleTimeoutMillis 0): the bench counts their Postgres backends' CPU by process ID, so a
  // backend must not end mid-phase. application_name is how it finds them.
  const pool = new Pool({
    connectionString: context.env.PG_URL,
    application_name: context.env.PG_APPLICATION_NAME,
    max: context.concurrency,
    idleTimeoutMillis: 0,
  });
  const checkpointer = new PostgresSaver(pool);
  await checkpointer.setup();

  const restartService = tool(
    async ({ service }, config) => {
      context.toolEntered(threadOf(config), callIdOf(threadOf(config)));
      return `restarted ${service}`;
    },
    {
      name: PEER_TOOL,
      description: 'Restarts a service',
      schema: z.object({ service: z.string() }),
    },
  );

  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', (state, config: Config) => {
      if (last(state.messages) instanceof ToolMessage) return { messages: [new AIMessage('restarted')] };
      const call = { id: callIdOf(threadOf(config)), name: PEER_TOOL, args: { service: 'api' } };
      return { messages: [new AIMessage({ content: '', tool_calls: [call] })] };
    })
    .addNode(
      'approval',
      (state) => {
        const { tool_calls } = last(state.messages) as AIMessage;
        const decision = interrupt({ toolCall: tool_calls?.[0] });
        return new Command({ goto: decision === 'approve' ? 'tools' : END });
      },
      { ends: ['tools', END] },
    )
    .addNode('tools', async (state, config: Config) => {
      // A tool answers a ToolMessage when invoked with a tool call (type 'tool_call', as the prebuilt ToolNode does).
      const calls = (last(state.messages) as AIMessage).tool_calls ?? [];
      const results = calls.map((call) => restartService.invoke({ ...call, type: 'tool_call' }, config));
      return { messages: await Promise.all(results) };
    })
    .addEdge(START, 'model')
    .addConditionalEdges(
      'model',
      (state) => ((last(state.messages) as AIMessage).tool_calls?.length ? 'approval' : END),
      ['approval', END],
    )
    .addEdge('tools', 'model')
    .compile({ checkpointer });

  return {
    async start(runId) {
      const config = { configurable: { thread_id: runId } };
      const paused = await graph.invoke({ messages: [new HumanMessage('restart the api service')] }, config);
      if (!('__interrupt__' in paused)) throw new Error(`run ${runId} did not pause for approval`);
      return callIdOf(runId);
    },
    async resume(runId) {
      const done = await graph.invoke(new Command({ resume: 'approve' }), {
        configurable: { thread_id: runId },
      });
      const answer = last(done.messages);
      return answer instanceof AIMessage && answer.content === 'restarted' ? 'completed' : 'failed';
    },
    async close() {
      await pool.end();
    },
  };
}
