// MCP overhead: an auto call whose tool is an MCP server's, through the whole worker (policy, run state, the MCP
// client), against calling the same server directly with an MCP client of the bench's own, in the same run. The
// server is the repository's ops MCP server (its own process, streamable HTTP); the worker runs the shipped agents
// config (config/agents.json), so this is the demo's path.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Child } from '../support/processes';
import { autoOverhead, type AutoOverheadResult } from './auto-overhead';

export interface McpOverheadOptions {
  /** A worker whose `ops` agent takes its tools from `opsServerUrl`. */
  worker: Child;
  /** The MCP endpoint, e.g. http://127.0.0.1:3002/mcp. */
  opsServerUrl: string;
  /** A token the ops server lets in (the same the worker sends). */
  opsServerToken: string;
  redisUrl: string;
  keyPrefix: string;
  requesterToken: string;
  repeats: number;
  calls: number;
  quiet?: boolean;
}

export async function mcpOverhead(o: McpOverheadOptions): Promise<AutoOverheadResult> {
  const client = new Client({ name: 'countersign-bench', version: '0.1.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(o.opsServerUrl), {
      requestInit: { headers: { authorization: `Bearer ${o.opsServerToken}` } },
    }),
  );
  try {
    return await autoOverhead({
      ...o,
      label: 'MCP auto-call overhead',
      callDirect: async (args) => {
        const result = await client.callTool({ name: 'get_service_status', arguments: args });
        if (result.isError)
          throw new Error(`the ops server refused a direct call: ${JSON.stringify(result.content)}`);
        return result;
      },
    });
  } finally {
    await client.close();
  }
}
