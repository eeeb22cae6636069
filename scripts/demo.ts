// Entry point of `npm run demo` (see scripts/demo/demo.ts). Options: `npm run demo -- --help`.
import { Command } from 'commander';
import { NoRedisError } from './demo/local-redis';
import { runDemo } from './demo/demo';

const program = new Command('npm run demo --')
  .description(
    'Countersign end to end: both services, a scripted ops runbook, approvals by a person or a stand-in.',
  )
  .option(
    '--auto-approver',
    'a stand-in approver decides as the runbook says (default when CI=true or stdin is not a terminal)',
  )
  .option('--interactive', 'wait for a person to decide (inbox, email link or CLI), even without a terminal')
  .option(
    '--redis-url <url>',
    'Redis to use; one is started if none answers',
    process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  )
  .option('--worker-port <port>', 'agent worker port (another free one if taken)', '3000')
  .option('--approval-port <port>', 'approval service port (another free one if taken)', '3001')
  .parse();

const options = program.opts<{
  autoApprover?: boolean;
  interactive?: boolean;
  redisUrl: string;
  workerPort: string;
  approvalPort: string;
}>();
const nonInteractive = process.env.CI === 'true' || !process.stdin.isTTY;
const autoApprove = options.autoApprover ?? (!options.interactive && nonInteractive);

const abort = new AbortController();
process.once('SIGINT', () => {
  process.stdout.write('\nstopping the demo …\n');
  abort.abort();
});

runDemo({
  autoApprove: Boolean(autoApprove),
  redisUrl: options.redisUrl,
  workerPort: Number(options.workerPort),
  approvalPort: Number(options.approvalPort),
  env: process.env,
  say: (line) => process.stdout.write(`${line}\n`),
  signal: abort.signal,
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof NoRedisError ? '' : 'demo failed: '}${(error as Error).message}\n`,
    );
    process.exit(error instanceof NoRedisError ? 2 : 1);
  },
);
