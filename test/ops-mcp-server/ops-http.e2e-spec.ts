// Who may call the ops MCP server (apps/ops-mcp-server/src/transports/ops-http.ts): a bearer token of a principal that
// OPS_MCP_CALLERS names, and nobody else, even with a valid token. Driven with raw HTTP requests to its endpoint.
import { startOpsMcpServer, type RunningOpsMcpServer } from '../../apps/ops-mcp-server/src/bootstrap';
import { principalsConfig, testToken } from '../support/principals';
import { deletePrefixedKeys, redisEnv, uniquePrefixes } from '../support/redis';

/** The one caller let in (a machine principal of the test directory). */
const CALLER = 'mcp-gateway';

describe('ops MCP server', () => {
  const prefixes = uniquePrefixes('ops-http');
  let ops: RunningOpsMcpServer;

  beforeAll(async () => {
    ops = await startOpsMcpServer(
      { ...redisEnv(prefixes), PRINCIPALS_CONFIG: principalsConfig(), OPS_MCP_CALLERS: CALLER },
      { port: 0, host: '127.0.0.1' },
    );
  });
  afterAll(async () => {
    await ops?.close();
    await deletePrefixedKeys(prefixes);
  });

  it('refuses a client without a token (401) and a principal that is not a caller (403)', async () => {
    const initialize = (authorization?: string) =>
      fetch(ops.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        }),
      });
    expect((await initialize()).status).toBe(401);
    expect((await initialize('Bearer not-a-token')).status).toBe(401);
    expect((await initialize(`Bearer ${testToken('alice')}`)).status).toBe(403);
    expect((await initialize(`Bearer ${testToken(CALLER)}`)).status).toBe(200);
  });
});
