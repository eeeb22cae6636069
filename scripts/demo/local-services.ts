// Both services in this process with development defaults, for `npm run demo` and `npm start`: Redis (found or
// started), a local mail catcher unless SMTP is configured, development-only secrets unless set, and free ports.
// The ops agent's tools come from the repository's ops MCP server, started here too (the worker reaches it over
// streamable HTTP, as it would any MCP server).
import { Redis } from 'ioredis';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { startAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { startOpsMcpServer, type RunningOpsMcpServer } from '../../apps/ops-mcp-server/src/bootstrap';
import { ensureRedis, type DemoRedis } from './local-redis';
import { type CaughtMail, MailCatcher } from './mail-catcher';
import { freePort } from './ports';

/** Used only when the environment sets none: marked so that no one mistakes them for real secrets. */
export const DEV_SECRETS = {
  DECISION_SIGNING_SECRET: 'dev-only-decision-signing-secret-NOT-FOR-PRODUCTION',
  LINK_TOKEN_SECRET: 'dev-only-link-token-secret-NOT-FOR-PRODUCTION',
  AUDIT_SIGNING_SECRET: 'dev-only-audit-signing-secret-NOT-FOR-PRODUCTION',
  // The demo token of the `agent-worker` principal of config/principals.json, which the ops MCP server lets in.
  OPS_MCP_TOKEN: 'agent-worker-demo-token-change-me',
};

export interface LocalServicesOptions {
  redisUrl: string;
  /** Preferred ports; another free one is taken when one is in use (0: any). */
  workerPort: number;
  approvalPort: number;
  /** The ops MCP server's preferred port. @defaultValue 3002, or any when `workerPort` is 0 */
  opsPort?: number;
  /** The environment the services start from (secrets, SMTP_*, SLACK_*, LOG_LEVEL ... pass through). */
  env: Record<string, string | undefined>;
  /** Key and queue prefix; without it, the environment's or the services' defaults. */
  keyPrefix?: string;
  /** LOG_LEVEL when the environment sets none. */
  logLevel: string;
  /** Called with each mail the local catcher receives. */
  onMail?: (mail: CaughtMail) => void;
}

export interface LocalServices {
  redis: DemoRedis;
  worker: RunningAgentWorker;
  approval: RunningApprovalService;
  /** The repository's MCP server behind the `ops` agent's tools. */
  ops: RunningOpsMcpServer;
  /** The environment both services were started with. */
  serviceEnv: Record<string, string | undefined>;
  /** Set when mail goes to the local catcher (no SMTP_URL or SMTP_HOST in the environment). */
  catcher?: MailCatcher;
  /** Which secrets are the development-only ones. */
  devSecrets: string[];
  /** Stops what was started, in reverse order; never throws. */
  stop(): Promise<void>;
}

export async function startLocalServices(o: LocalServicesOptions): Promise<LocalServices> {
  const started: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const step of started.reverse()) await step().catch(() => undefined);
  };
  try {
    const redis = await ensureRedis(o.redisUrl);
    started.push(() => redis.stop());

    const { env } = o;
    let smtpUrl = env.SMTP_URL;
    let catcher: MailCatcher | undefined;
    if (!smtpUrl && !env.SMTP_HOST) {
      catcher = new MailCatcher(o.onMail);
      smtpUrl = await catcher.start();
      started.push(() => catcher!.stop());
    }
    const devSecrets = Object.keys(DEV_SECRETS).filter((name) => !env[name]);
    const serviceEnv: Record<string, string | undefined> = {
      ...env,
      REDIS_URL: redis.url,
      ...(o.keyPrefix ? { KEY_PREFIX: o.keyPrefix, QUEUE_PREFIX: `{${o.keyPrefix}}` } : {}),
      DECISION_SIGNING_SECRET: env.DECISION_SIGNING_SECRET || DEV_SECRETS.DECISION_SIGNING_SECRET,
      LINK_TOKEN_SECRET: env.LINK_TOKEN_SECRET || DEV_SECRETS.LINK_TOKEN_SECRET,
      AUDIT_SIGNING_SECRET: env.AUDIT_SIGNING_SECRET || DEV_SECRETS.AUDIT_SIGNING_SECRET,
      OPS_MCP_TOKEN: env.OPS_MCP_TOKEN || DEV_SECRETS.OPS_MCP_TOKEN,
      LOG_LEVEL: env.LOG_LEVEL ?? o.logLevel,
      SMTP_URL: smtpUrl,
      SEED_DEMO_INFRA: 'true',
      PORT: undefined,
      HOST: undefined,
    };

    const ops = await startOpsMcpServer(serviceEnv, {
      port: await freePort(o.opsPort ?? (o.workerPort === 0 ? 0 : 3002)),
      host: '127.0.0.1',
    });
    started.push(() => ops.close());
    serviceEnv.OPS_MCP_URL = ops.url;

    const approval = await startApprovalService(serviceEnv, {
      port: await freePort(o.approvalPort),
      host: '127.0.0.1',
    });
    started.push(() => approval.close());
    // The demo's scenario is the payments-failover runbook of config/runbooks.
    const worker = await startAgentWorker(
      { RUNBOOKS_DIR: 'config/runbooks', ...serviceEnv },
      {
        port: await freePort(o.workerPort),
        host: '127.0.0.1',
      },
    );
    started.push(() => worker.close());
    return { redis, worker, approval, ops, serviceEnv, catcher, devSecrets, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Removes the keys of one prefix from a Redis these scripts did not start (never FLUSHALL someone else's server). */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `*${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
