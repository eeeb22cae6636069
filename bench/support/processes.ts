// Child processes of the bench: agent workers (with the probe preloaded), the approval service and the floor
// worker. Each is started with ts-node like `npm start` would, waited on until healthy, and stopped by its PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import type { PeerName } from '../peers/peer-worker';
import type { ProbeEvent } from './worker-probe';
import { getJson } from './http';

export const ROOT = resolve(__dirname, '..', '..');
const TS_NODE = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];
const TAIL_BYTES = 8_000;

export class Child extends EventEmitter {
  private tail = '';
  private exited: Promise<number | null>;
  exitCode: number | null | undefined;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
    readonly url?: string,
  ) {
    super();
    const keep = (chunk: Buffer) => {
      this.tail = (this.tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    proc.on('message', (message: { probe?: ProbeEvent[]; ready?: boolean }) => {
      if (message?.probe) for (const event of message.probe) this.emit('probe', event);
      if (message?.ready) this.emit('ready');
    });
    this.exited = new Promise((done) =>
      proc.once('exit', (code) => {
        this.exitCode = code;
        done(code);
      }),
    );
  }

  /** The last lines the process wrote, for error messages. */
  output(): string {
    return this.tail.trim();
  }

  /** The process ID: node itself (started without a shell), so /proc/<pid>/stat is this child's own CPU. */
  get pid(): number {
    return this.proc.pid!;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  /** SIGTERM (graceful), then SIGKILL after `graceMs`. Only ever signals this child's own PID. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.running && this.proc.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Ports this process handed out: two children never get the same one. */
const handedOut = new Set<number>();

/**
 * A port free now, for a child to listen on. Picked below the kernel's ephemeral range (`ip_local_port_range`, from
 * 32768 by default): a port the kernel handed out (`listen(0)`) is in that range, and before the child listens on it,
 * some outgoing connection (the services' own Redis clients) can take it as its local port — one start failed with
 * EADDRINUSE that way.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  if (low <= FIRST_PICKED_PORT) return kernelPort();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = FIRST_PICKED_PORT + Math.floor(Math.random() * (low - FIRST_PICKED_PORT));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${FIRST_PICKED_PORT} and ${low - 1} after 100 tries`);
}

const FIRST_PICKED_PORT = 10_000;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

let profileDir: string | undefined;
/** `--cpu-prof <dir>`: every child writes a V8 CPU profile there when it exits. */
export function profileChildrenInto(dir: string | undefined): void {
  profileDir = dir;
}

function startTs(
  name: string,
  script: string,
  env: Record<string, string>,
  preload: string[] = [],
  url?: string,
) {
  const profile = profileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`]
    : [];
  const proc = spawn(
    process.execPath,
    [...profile, ...TS_NODE, ...preload.flatMap((p) => ['-r', p]), script],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  return new Child(name, proc, url);
}

/** Polls GET /health until it answers 200; fails early (with the child's output) if the child exits. */
export async function waitHealthy(child: Child, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!child.running)
      throw new Error(`${child.name} exited (${child.exitCode}) while starting:\n${child.output()}`);
    try {
      const { status } = await getJson(`${child.url}/health`);
      if (status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${child.name} did not become healthy in ${timeoutMs} ms:\n${child.output()}`);
}

export interface ServiceEnv {
  REDIS_URL: string;
  QUEUE_PREFIX: string;
  KEY_PREFIX: string;
  DECISION_SIGNING_SECRET: string;
  AUDIT_SIGNING_SECRET: string;
  /** The principal directory (inline JSON) both services read. */
  PRINCIPALS_CONFIG: string;
  LOG_LEVEL: string;
  /** Explicit rate limits (RATE_LIMIT_*): the bench starts thousands of runs as one principal in seconds. */
  [limit: `RATE_LIMIT_${string}`]: string;
}

export async function startWorker(
  index: number | string,
  env: ServiceEnv,
  options: { concurrency: number; agentsConfig?: string; extraEnv?: Record<string, string> },
): Promise<Child> {
  const port = await freePort();
  const child = startTs(
    `agent-worker-${index}`,
    'apps/agent-worker/src/main.ts',
    {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      // By default the worker's built-in ops tools (in-process); config/agents.json takes them from the ops MCP server.
      AGENTS_CONFIG: options.agentsConfig ?? 'test/support/agents.json',
      // The scenarios' tools act on the simulated infrastructure.
      SEED_DEMO_INFRA: 'true',
      WORKER_CONCURRENCY: String(options.concurrency),
      ...options.extraEnv,
    },
    ['./bench/support/worker-probe.ts'],
    `http://127.0.0.1:${port}`,
  );
  return child;
}

export async function startApprovalService(
  env: ServiceEnv,
  options: { approvalsConfig: string; linkSecret: string },
): Promise<Child> {
  const port = await freePort();
  return startTs(
    'approval-service',
    'apps/approval-service/src/main.ts',
    {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      APPROVALS_CONFIG: options.approvalsConfig,
      LINK_TOKEN_SECRET: options.linkSecret,
    },
    [],
    `http://127.0.0.1:${port}`,
  );
}

/** The repository's ops MCP server; its MCP endpoint is `${url}/mcp`. */
export async function startOpsMcpServer(env: ServiceEnv): Promise<Child> {
  const port = await freePort();
  return startTs(
    'ops-mcp-server',
    'apps/ops-mcp-server/src/main.ts',
    {
      REDIS_URL: env.REDIS_URL,
      KEY_PREFIX: env.KEY_PREFIX,
      PRINCIPALS_CONFIG: env.PRINCIPALS_CONFIG,
      LOG_LEVEL: env.LOG_LEVEL,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    [],
    `http://127.0.0.1:${port}`,
  );
}

/** The MCP gateway (streamable HTTP); its MCP endpoint is `${url}/mcp`. `extraEnv`: its config, tokens, URLs. */
export async function startMcpGateway(env: ServiceEnv, extraEnv: Record<string, string>): Promise<Child> {
  const port = await freePort();
  return startTs(
    'mcp-gateway',
    'apps/mcp-gateway/src/main.ts',
    {
      REDIS_URL: env.REDIS_URL,
      KEY_PREFIX: env.KEY_PREFIX,
      PRINCIPALS_CONFIG: env.PRINCIPALS_CONFIG,
      AUDIT_SIGNING_SECRET: env.AUDIT_SIGNING_SECRET,
      LOG_LEVEL: env.LOG_LEVEL,
      PORT: String(port),
      HOST: '127.0.0.1',
      ...extraEnv,
    },
    [],
    `http://127.0.0.1:${port}`,
  );
}

/** The gateway's floor (bench/bare-mcp-proxy.ts) in front of `downstreamUrl`; its MCP endpoint is `${url}/mcp`. */
export async function startBareMcpProxy(downstreamUrl: string, downstreamToken: string): Promise<Child> {
  const port = await freePort();
  return startTs(
    'bare-mcp-proxy',
    'bench/bare-mcp-proxy.ts',
    { PORT: String(port), DOWNSTREAM_URL: downstreamUrl, DOWNSTREAM_TOKEN: downstreamToken },
    [],
    `http://127.0.0.1:${port}`,
  );
}

export function startFloorWorker(env: {
  REDIS_URL: string;
  QUEUE_PREFIX: string;
  CONCURRENCY: string;
}): Child {
  return startTs('floor-worker', 'bench/floor-worker.ts', { ...env, FLOOR_KIND: 'bare' });
}

/** The contract floor's worker (bench/floor-worker.ts with its POST /runs) and its approval stand-in (bench/floor-approval.ts). */
export async function startContractFloor(env: {
  REDIS_URL: string;
  QUEUE_PREFIX: string;
  CONCURRENCY: string;
}): Promise<{ worker: Child; approval: Child }> {
  const [workerPort, approvalPort] = [await freePort(), await freePort()];
  return {
    worker: startTs(
      'contract-floor-worker',
      'bench/floor-worker.ts',
      { ...env, FLOOR_KIND: 'contract', PORT: String(workerPort) },
      [],
      `http://127.0.0.1:${workerPort}`,
    ),
    approval: startTs(
      'contract-floor-approval',
      'bench/floor-approval.ts',
      { ...env, PORT: String(approvalPort) },
      [],
      `http://127.0.0.1:${approvalPort}`,
    ),
  };
}

/** A peer's worker (bench/peers/peer-worker.ts): the agent loop of another framework behind the floors' queue hops. */
export function startPeerWorker(
  peer: PeerName,
  env: { REDIS_URL: string; QUEUE_PREFIX: string; KEY_PREFIX: string; CONCURRENCY: string } & Record<
    string,
    string
  >,
): Child {
  return startTs(`peer-${peer}`, 'bench/peers/peer-worker.ts', { ...env, PEER: peer });
}

/** Waits for a floor process to say it is ready over IPC (listening, when it has a door). */
export function waitReady(child: Child, timeoutMs = 120_000): Promise<void> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${child.name} not ready:\n${child.output()}`)), timeoutMs);
    child.proc.once('exit', () => fail(new Error(`${child.name} exited while starting:\n${child.output()}`)));
    child.once('ready', () => {
      clearTimeout(timer);
      done();
    });
  });
}

/** Starts every child at once (boot is CPU-bound ts-node work) and waits until all are healthy. */
export async function allHealthy(children: Child[]): Promise<void> {
  await Promise.all(children.map((c) => waitHealthy(c)));
}
