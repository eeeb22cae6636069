// The cost of an admission hook per tool call: the auto-tier measurement (auto-overhead.ts) again, through a worker
// whose `get_service_status` has a before-hook — a local hook server in the bench process answering `allow` at once
// — minus the same measurement without one. What remains is the signed POST, its answer and its audit entry.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autoOverhead, type AutoOverheadResult } from './auto-overhead';
import type { Child } from '../support/processes';

export interface HookOverheadResult {
  /** The auto-tier measurement through the worker with the before-hook. */
  withHook: AutoOverheadResult;
  /** withHook.perCallThroughWorker − without.perCallThroughWorker. */
  hookPerCallMs: number;
  /** The same for the worker's CPU per call (undefined where /proc is not readable). */
  hookWorkerCpuPerCallMs?: number;
  /** Requests the hook server answered (each call asked it once). */
  hookRequests: number;
}

const HOOK_SECRET_ENV = 'BENCH_HOOK_SECRET';

/** A hook that allows everything at once; counts what it answered. */
export async function startAllowHook(): Promise<{
  url: string;
  requests: () => number;
  stop: () => Promise<void>;
}> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"action":"allow"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/before`,
    requests: () => requests,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The bench's agents config (test/support/agents.json) with a before-hook on the ops agent's get_service_status. */
export function agentsConfigWithHook(base: string, hookUrl: string): string {
  const config = JSON.parse(readFileSync(base, 'utf8')) as {
    agents: Record<string, Record<string, unknown>>;
  };
  config.agents.ops.admission = {
    beforeTool: [
      { name: 'bench-allow', tools: ['get_service_status'], url: hookUrl, secretEnv: HOOK_SECRET_ENV },
    ],
  };
  const file = join(mkdtempSync(join(tmpdir(), 'cs-bench-hook-')), 'agents.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

export const hookWorkerEnv = { [HOOK_SECRET_ENV]: 'bench-hook-secret-0123456789' };

export async function hookOverhead(o: {
  /** A worker started on agentsConfigWithHook's config, with hookWorkerEnv. */
  worker: Child;
  hook: { requests: () => number };
  without: AutoOverheadResult;
  redisUrl: string;
  keyPrefix: string;
  requesterToken: string;
  repeats: number;
  calls: number;
}): Promise<HookOverheadResult> {
  const withHook = await autoOverhead({ ...o, label: 'auto tier with a before-hook' });
  const cpu =
    withHook.workerCpuPerCallMs !== undefined && o.without.workerCpuPerCallMs !== undefined
      ? withHook.workerCpuPerCallMs - o.without.workerCpuPerCallMs
      : undefined;
  return {
    withHook,
    hookPerCallMs: withHook.perCallThroughWorkerMs - o.without.perCallThroughWorkerMs,
    ...(cpu !== undefined ? { hookWorkerCpuPerCallMs: cpu } : {}),
    hookRequests: o.hook.requests(),
  };
}
