// `npm run docs:screenshots`: regenerates the pictures in docs/images/ on purpose (tests never write tracked files).
//   inbox.png          carol's inbox while the CLI example's run (examples/runbook.json) waits for her vote, beside
//                      a scale request: each card with what the run is for, the tool, its preview and the route
//   inbox-edit.png     the scale request's card with its edit form open (arguments from the tool's schema)
//   inbox-history.png  the History view once they are decided (one with edited arguments) and a rule decided one
//   inbox-rules.png    the Rules view with a standing rule, as a rule-writer (carol) sees it
// Both services run in this process on a throwaway key prefix; needs Redis and Debian's Chromium.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScriptTurnSchema, type ScriptTurn } from '@countersign/contracts';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { WorkerClient } from '../apps/cli/src/client/worker-client';
import { launchChromium } from '../test/support/browser';
import { ApprovalClient } from '../apps/cli/src/client/approval-client';
import { loadApprovalServiceConfig } from '../apps/approval-service/src/config/approval-service.config';
import { demoToken } from './demo/approver-stand-in';
import { deleteKeys, startLocalServices } from './demo/local-services';

const root = join(__dirname, '..');
/** Where the pictures go: docs/images, which the docs link to. */
const images = join(root, 'docs', 'images');
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
    const approvalsAs = (id: string) => new ApprovalClient(services.approval.url, demoToken(config, id));
    const carol = approvalsAs('carol');

    /** Starts a run as alice and waits until it asks for confirmation; the call's ID. */
    const parked = async (input: string, turns: ScriptTurn[]) => {
      const runId = await worker.startRun({ agent: 'ops', input, script: turns });
      for await (const event of worker.follow(runId))
        if (event.type === 'tool_confirmation') return { runId, callId: event.call.callId };
      throw new Error(`run ${runId} ended without asking`);
    };
    const restart = await parked('restart payments', script);
    const scale = await parked('get payments through the evening peak', [
      {
        text: 'payments is at 90% CPU; three times the replicas should hold the peak.',
        toolCalls: [{ name: 'scale_service', args: { service: 'payments', replicas: 6 } }],
      },
      { text: 'scaled' },
    ]);

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      await page.goto((await carol.signInLink()).url);
      await page.getByRole('button', { name: 'Open my inbox' }).click();
      await page.locator(`section[data-call-id="${scale.callId}"]`).waitFor();
      await page.locator('#live', { hasText: 'live' }).waitFor();
      await shoot(page, 'inbox.png');

      const card = page.locator(`section[data-call-id="${scale.callId}"]`);
      await card.getByRole('button', { name: 'Edit arguments…' }).click();
      await card.locator('[data-field="replicas"]').fill('4');
      await card.screenshot({ path: join(images, 'inbox-edit.png') });
      say(`wrote ${join(images, 'inbox-edit.png')}`);

      // Decided: the restart by carol and dave, the scale with carol's edit (and dave's approval of it).
      await carol.decide(restart.callId, 'approve');
      await approvalsAs('dave').decide(restart.callId, 'approve');
      await carol.decide(scale.callId, 'approve', undefined, { args: { service: 'payments', replicas: 4 } });
      await approvalsAs('dave').decide(scale.callId, 'approve');
      // A standing rule decides the next web restart with no person.
      await carol.addRule({
        tool: 'restart_service',
        requester: 'alice',
        args: { service: 'web' },
        note: 'routine',
      });
      const ruled = await worker.startRun({
        agent: 'ops',
        input: 'restart web',
        script: [{ toolCalls: [{ name: 'restart_service', args: { service: 'web' } }] }, { text: 'done' }],
      });
      for await (const event of worker.follow(ruled)) if (event.type === 'done') break;
      for (const { runId } of [restart, scale])
        for await (const event of worker.follow(runId)) if (event.type === 'done') break;

      await page.goto(`${services.approval.url}/inbox/history`);
      await page.locator('section.history').nth(2).waitFor();
      await shoot(page, 'inbox-history.png');
      await page.goto(`${services.approval.url}/inbox/rules`);
      await page.locator('section.rule').first().waitFor();
      await shoot(page, 'inbox-rules.png');
    } finally {
      await browser.close();
    }
  } finally {
    await services.stop();
    if (!services.redis.started) await deleteKeys(services.redis.url, prefix);
  }
}

async function shoot(page: Page, name: string): Promise<void> {
  const file = join(images, name);
  await page.screenshot({ path: file, fullPage: true });
  say(`wrote ${file}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`docs:screenshots failed: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
