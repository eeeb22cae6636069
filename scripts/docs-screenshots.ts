// `npm run docs:screenshots`: regenerates the pictures in docs/ on purpose (tests never write tracked files).
// docs/inbox.png: the web inbox as carol sees it while the README's runbook (examples/runbook.json) waits for her
// vote. Both services run in this process on a throwaway key prefix; needs Redis and Debian's Chromium.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptTurnSchema } from '@countersign/contracts';
import { z } from 'zod';
import { WorkerClient } from '../apps/cli/src/client/worker-client';
import { launchChromium } from '../test/support/browser';
import { ApprovalClient } from '../apps/cli/src/client/approval-client';
import { loadApprovalServiceConfig } from '../apps/approval-service/src/config/approval-service.config';
import { demoToken } from './demo/approver-stand-in';
import { deleteKeys, startLocalServices } from './demo/local-services';

const root = join(__dirname, '..');
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const prefix = `docs-${randomBytes(3).toString('hex')}`;
  const services = await startLocalServices({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    workerPort: 0,
    approvalPort: 0,
    env: process.env,
    keyPrefix: prefix,
    logLevel: 'error',
  });
  try {
    const { script } = z
      .object({ script: z.array(ScriptTurnSchema) })
      .parse(JSON.parse(readFileSync(join(root, 'examples', 'runbook.json'), 'utf8')));
    const config = loadApprovalServiceConfig(services.serviceEnv);
    const worker = new WorkerClient(services.worker.url, demoToken(config, 'alice'));
    const runId = await worker.startRun({ agent: 'ops', input: 'restart payments', script });
    for await (const event of worker.follow(runId)) if (event.type === 'tool_confirmation') break;

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      const carol = new ApprovalClient(services.approval.url, demoToken(config, 'carol'));
      await page.goto((await carol.signInLink()).url);
      await page.getByRole('button', { name: 'Open my inbox' }).click();
      await page.locator('section[data-call-id]').first().waitFor();
      await page.locator('#live', { hasText: 'live' }).waitFor();
      const file = join(root, 'docs', 'inbox.png');
      await page.screenshot({ path: file, fullPage: true });
      say(`wrote ${file}`);
    } finally {
      await browser.close();
    }
  } finally {
    await services.stop();
    if (!services.redis.started) await deleteKeys(services.redis.url, prefix);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`docs:screenshots failed: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
