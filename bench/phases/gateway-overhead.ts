// MCP gateway overhead: an auto-tier call through the gateway (its own process: authentication, the policy pipeline,
// the relay to the server, the audit entry) against the same call made directly to the same server, each by an MCP
// client of the bench over streamable HTTP, in the same run. Calls go one at a time, so the difference is what the
// gateway adds to one call's latency. The server is the repository's ops MCP server (its own process). The same
// calls through a bare MCP proxy (bench/bare-mcp-proxy.ts: the same SDK transports, nothing else) say how much of
// that is the extra hop itself, and how much the gateway's own work.
import { isDeepStrictEqual } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { median, Progress, wallNow } from '../support/measure';

export interface GatewayOverheadOptions {
  /** The gateway's MCP endpoint, fronting `opsServerUrl` with the ops tools under their own names. */
  gatewayUrl: string;
  /** A principal RBAC lets call the tool through the gateway. */
  gatewayClientToken: string;
  /** The bare proxy's MCP endpoint, in front of the same server. */
  bareProxyUrl: string;
  opsServerUrl: string;
  opsServerToken: string;
  repeats: number;
  calls: number;
  quiet?: boolean;
}

export interface GatewayOverheadResult {
  calls: number;
  repeats: number;
  /** Median wall time of `calls` calls, one after the other, to the server directly. */
  directCallsMs: number;
  /** The same through the gateway. */
  gatewayCallsMs: number;
  /** The same through the bare proxy. */
  bareProxyCallsMs: number;
  directPerCallMs: number;
  gatewayPerCallMs: number;
  bareProxyPerCallMs: number;
  /** Median over the repeats of (gateway − direct) / calls: what the target judges. */
  overheadPerCallMs: number;
  /** Median over the repeats of (bare proxy − direct) / calls: one more MCP hop, with nothing done in it. */
  extraHopPerCallMs: number;
  /** Median over the repeats of (gateway − bare proxy) / calls: the gateway's own work. */
  gatewayWorkPerCallMs: number;
}

const WARM_UP_CALLS = 50;

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'countersign-bench', version: '0.1.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

export async function gatewayOverhead(o: GatewayOverheadOptions): Promise<GatewayOverheadResult> {
  const direct = await connect(o.opsServerUrl, o.opsServerToken);
  const viaGateway = await connect(o.gatewayUrl, o.gatewayClientToken);
  const viaProxy = await connect(o.bareProxyUrl, o.opsServerToken);
  const paths = [direct, viaProxy, viaGateway];
  const bar = o.quiet ? undefined : new Progress('MCP gateway overhead', o.repeats * paths.length);
  const call = (client: Client) =>
    client.callTool({ name: 'get_service_status', arguments: { service: 'api' } });
  const time = async (client: Client): Promise<number> => {
    const start = wallNow();
    for (let i = 0; i < o.calls; i++) {
      const result = await call(client);
      if (result.isError) throw new Error(`a call failed: ${JSON.stringify(result.content)}`);
    }
    return wallNow() - start;
  };
  const times = new Map<Client, number[]>(paths.map((p) => [p, []]));
  try {
    // The gateway must answer what the server answers, or the comparison means nothing.
    const [own, relayed] = [await call(direct), await call(viaGateway)];
    if (!isDeepStrictEqual(own, relayed))
      throw new Error(`the gateway answered ${JSON.stringify(relayed)}, the server ${JSON.stringify(own)}`);
    for (let i = 0; i < WARM_UP_CALLS; i++) for (const path of paths) await call(path);
    for (let r = 0; r < o.repeats; r++) {
      // Each repeat starts with another path, so none always follows the same one (or the VM's same mood).
      for (let k = 0; k < paths.length; k++) {
        const path = paths[(r + k) % paths.length];
        times.get(path)!.push(await time(path));
        bar?.update(r * paths.length + k + 1);
      }
    }
  } finally {
    bar?.stop();
    await Promise.all(paths.map((p) => p.close()));
  }
  const [d, p, g] = paths.map((path) => times.get(path)!);
  const perCall = (a: number[], b: number[]) => median(a.map((value, i) => (value - b[i]) / o.calls));
  return {
    calls: o.calls,
    repeats: o.repeats,
    directCallsMs: median(d),
    gatewayCallsMs: median(g),
    bareProxyCallsMs: median(p),
    directPerCallMs: median(d) / o.calls,
    gatewayPerCallMs: median(g) / o.calls,
    bareProxyPerCallMs: median(p) / o.calls,
    overheadPerCallMs: perCall(g, d),
    extraHopPerCallMs: perCall(p, d),
    gatewayWorkPerCallMs: perCall(g, p),
  };
}
