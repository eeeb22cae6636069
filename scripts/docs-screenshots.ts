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
import { loadApprovalServiceConfig } from '../apps/approval-service/src/config/approval-service.config';
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
    const worker = new WorkerClient(services.worker.url);
    const runId = await worker.startRun({ agent: 'ops', userId: 'alice', input: 'restart payments', script });
    for await (const event of worker.follow(runId)) if (event.type === 'tool_confirmation') break;

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      const { approvers } = loadApprovalServiceConfig(services.serviceEnv).approvals;
      const carol = approvers.find((a) => a.id === 'carol')!;
      await page.goto(`${services.approval.url}/inbox?token=${encodeURIComponent(carol.apiToken)}`);
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
