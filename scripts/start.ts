// `npm start`: the agent worker and the approval service for real, with development defaults, until Ctrl-C
// (SIGINT or SIGTERM). Unlike `npm run demo`, it starts no run: use the CLI, the HTTP API or the inbox.
// Options: `npm start -- --help`.
import { resolve } from 'node:path';
import { Command } from 'commander';
import { loadApprovalServiceConfig } from '../apps/approval-service/src/config/approval-service.config';
import { demoToken } from './demo/approver-stand-in';
import { NoRedisError } from './demo/local-redis';
import { startLocalServices } from './demo/local-services';
import { approvalLink } from './demo/mail-catcher';

const program = new Command('npm start --')
  .description('Both Countersign services with development defaults, until Ctrl-C.')
  .option(
    '--redis-url <url>',
    'Redis to use; a throwaway redis-server is started if none answers',
    process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  )
  .option('--worker-port <port>', 'agent worker port (another free one if taken)', '3000')
  .option('--approval-port <port>', 'approval service port (another free one if taken)', '3001')
  .parse();
const options = program.opts<{ redisUrl: string; workerPort: string; approvalPort: string }>();
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  // The services' JSON log lines go to a file, so that this terminal shows only what a person reads.
  const logFile = resolve(process.env.LOG_FILE || '.countersign/logs/services.log');
  const services = await startLocalServices({
    redisUrl: options.redisUrl,
    workerPort: Number(options.workerPort),
    approvalPort: Number(options.approvalPort),
    env: { ...process.env, LOG_FILE: logFile },
    logLevel: 'info',
    onMail: (mail) =>
      say(`✉ mail to ${mail.to.join(', ')}: ${mail.subject}\n    ${approvalLink(mail) ?? ''}`),
  });
  const { redis, worker, approval, serviceEnv, devSecrets } = services;
  const config = loadApprovalServiceConfig(serviceEnv);
  const members = new Set(config.approvals.groups.flatMap((g) => g.members));
  const approvers = config.principals.principals.filter((p) => members.has(p.id)).map((p) => p.id);
  /** The demo's readable token of a principal, when PRINCIPALS_CONFIG is the demo's (else a placeholder). */
  const token = (id: string) => {
    try {
      return demoToken(config, id);
    } catch {
      return `<${id}'s token>`;
    }
  };
  // The CLI's defaults are :3000 and :3001; on other ports it is told where the services are.
  const defaultPorts = worker.url.endsWith(':3000') && approval.url.endsWith(':3001');
  say(
    [
      'Countersign is running with development defaults (not for production):',
      `  agent worker      ${worker.url}   POST /runs, GET /runs/:id, GET /runs/:id/events, GET /demo/infra`,
      `  approval service  ${approval.url}   /inbox, /approvals, /audit, /docs`,
      `  ops MCP server    ${services.ops.url}   the ops agent's tools (the worker calls them over MCP)`,
      `  Redis             ${redis.url}${redis.started ? ' (started for this session: its data goes when you stop)' : ''}, key prefix ${serviceEnv.KEY_PREFIX ?? 'countersign'}`,
      `  mail              ${services.catcher ? `caught locally: read every mail at ${services.catcher.viewerUrl} (each approval link is printed here too)` : `sent through ${serviceEnv.SMTP_URL ?? serviceEnv.SMTP_HOST}`}`,
      `  logs              ${logFile} (level ${serviceEnv.LOG_LEVEL}; follow them with tail -f)`,
      devSecrets.length
        ? `  secrets           DEVELOPMENT-ONLY values for ${devSecrets.join(', ')} (set them in the environment for anything real)`
        : '  secrets           from the environment',
      `  approvers         ${approvers.join(', ')} (tokens: <name>-demo-token-change-me; config/principals.json holds their hashes)`,
      '',
      'Try it, in another terminal:',
      ...(defaultPorts
        ? []
        : [`  export COUNTERSIGN_WORKER_URL=${worker.url} COUNTERSIGN_APPROVAL_URL=${approval.url}`]),
      `  npx countersign run ops "restart payments" --token ${token('alice')} --script examples/runbook.json`,
      `  npx countersign approvals list --token ${token('carol')}`,
      `  npx countersign approve <requestId> --token ${token('carol')}   (the ID \`approvals list\` shows)`,
      `  npx countersign approve <requestId> --token ${token('dave')}    (payments needs two approvers: carol and dave)`,
      `  npx countersign inbox-link --token ${token('carol')}   (a one-time link that opens carol's web inbox)`,
      '',
      'Stop with Ctrl-C.',
    ].join('\n'),
  );

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  say('\nstopping …');
  await services.stop();
  say('stopped.');
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof NoRedisError ? '' : 'start failed: '}${(error as Error).message}\n`,
    );
    process.exit(error instanceof NoRedisError ? 2 : 1);
  },
);
