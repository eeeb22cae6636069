// Redis servers the suite owns: a standalone server with AOF (to kill and restart) and a three-master
// Redis Cluster, each on free loopback ports in a temp dir, always stopped (and removed) afterwards.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { waitFor } from '../../support/redis';

const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
const REDIS_CLI = process.env.REDIS_CLI_BIN ?? '/usr/bin/redis-cli';
const run = promisify(execFile);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** One redis-server process; `restart()` starts it again on the same port and directory (AOF replayed). */
export class OwnRedisServer {
  readonly dir = mkdtempSync(join(tmpdir(), 'cs-redis-'));
  private process?: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly args: string[],
  ) {}

  static async start(args: string[] = [], port?: number): Promise<OwnRedisServer> {
    const server = new OwnRedisServer(port ?? (await freePort()), args);
    await server.launch();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  private async launch(): Promise<void> {
    this.process = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', ...this.args],
      { stdio: 'ignore' },
    );
    await waitFor(async () => {
      const probe = new Redis(this.port, '127.0.0.1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on('error', () => undefined); // refused until the server listens: the connect() below says so
      try {
        await probe.connect();
        const loading = (await probe.info('persistence')).includes('loading:1');
        return !loading && (await probe.ping()) === 'PONG';
      } finally {
        probe.disconnect();
      }
    }, `redis-server on port ${this.port}`);
  }

  /** SIGKILL: no shutdown save, no goodbye to clients. What survives is what the AOF had on disk. */
  async kill(): Promise<void> {
    const proc = this.process;
    // Already gone: exitCode is set by an exit, signalCode by a kill.
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }

  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** What `redis-cli --cluster create` does, for one or two masters: meet, then an even range of slots each. */
async function assignSlots(servers: OwnRedisServer[]): Promise<void> {
  const per = Math.ceil((LAST_SLOT + 1) / servers.length);
  for (const [i, server] of servers.entries()) {
    const node = new Redis(server.port, '127.0.0.1');
    try {
      if (i > 0) await node.cluster('MEET', '127.0.0.1', servers[0].port);
      const from = i * per;
      await node.cluster('ADDSLOTSRANGE', from, Math.min(LAST_SLOT, from + per - 1));
    } finally {
      node.disconnect();
    }
  }
}

/** AOF on, fsync on every write: a kill -9 loses nothing that was acknowledged. */
export function startDurableRedis(): Promise<OwnRedisServer> {
  return OwnRedisServer.start(['--appendonly', 'yes', '--appendfsync', 'always']);
}

/** Slots of a cluster, the last slot number. */
const LAST_SLOT = 16383;

/**
 * N masters (three by default), no replicas, slots spread evenly: by `redis-cli --cluster create` for three or more,
 * by hand below that (redis-cli refuses fewer than three; the bench measures a one-master cluster).
 */
export class OwnRedisCluster {
  private constructor(readonly servers: OwnRedisServer[]) {}

  static async start(masters = 3): Promise<OwnRedisCluster> {
    const servers: OwnRedisServer[] = [];
    try {
      for (let i = 0; i < masters; i++) {
        servers.push(
          await OwnRedisServer.start([
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '5000',
            // A node that never met another does not know its own address (CLUSTER SLOTS would say "").
            '--cluster-announce-ip',
            '127.0.0.1',
            '--appendonly',
            'no',
          ]),
        );
      }
      if (masters >= 3)
        await run(REDIS_CLI, [
          '--cluster',
          'create',
          ...servers.map((s) => `127.0.0.1:${s.port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ]);
      else await assignSlots(servers);
      const cluster = new OwnRedisCluster(servers);
      await waitFor(async () => {
        const client = new Redis(servers[0].port, '127.0.0.1');
        try {
          return (await client.cluster('INFO')).includes('cluster_state:ok');
        } finally {
          client.disconnect();
        }
      }, 'cluster_state:ok');
      return cluster;
    } catch (error) {
      await Promise.all(servers.map((s) => s.stop()));
      throw error;
    }
  }

  /** One plain client per master (for INFO on each), in the order of `servers`; the caller disconnects them. */
  nodeClients(): Redis[] {
    return this.servers.map((s) => new Redis(s.port, '127.0.0.1'));
  }

  /** The value of REDIS_CLUSTER_NODES. */
  get nodes(): string {
    return this.servers.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  client(options: { blocking?: boolean } = {}): Cluster {
    return new Cluster(
      this.servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
      { redisOptions: { maxRetriesPerRequest: options.blocking ? null : 20 } },
    );
  }

  /** Which master serves a key (its port). */
  async portOf(key: string): Promise<number> {
    const client = new Redis(this.servers[0].port, '127.0.0.1');
    try {
      const slot = (await client.cluster('KEYSLOT', key)) as number;
      const slots = (await client.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
      return slots.find(([from, to]) => slot >= from && slot <= to)![2][1];
    } finally {
      client.disconnect();
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}
