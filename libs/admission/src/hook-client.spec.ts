// The hook client against a real local server: what a hook answers is read within bounds, whatever the hook does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { callHook, MAX_ANSWER_BYTES, type ResolvedHook } from './hook-client';

describe('callHook', () => {
  let server: Server;
  let url: string;
  /** Set per test: what the hook server does with a request. */
  let answer: (res: import('node:http').ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const hook = (): ResolvedHook => ({
    name: 'big',
    tools: ['*'],
    url,
    secretEnv: 'HOOK_SECRET',
    secret: 's3cret',
    timeoutMs: 20_000,
  });
  const Answer = z.object({ action: z.literal('allow') });

  it('refuses an answer longer than the cap as soon as the cap is passed, without waiting for its end', async () => {
    // 2 MiB sent, and the answer never ends: only reading past the cap can end the call before the timeout.
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"action":"allow","pad":"${'x'.repeat(2 * MAX_ANSWER_BYTES)}`);
    };
    const reply = await callHook(hook(), { tool: 't' }, Answer);
    expect(reply).toMatchObject({ ok: false, reason: `answered more than ${MAX_ANSWER_BYTES} bytes` });
  }, 30_000);

  it('reads an answer within the cap', async () => {
    answer = (res) => res.end(JSON.stringify({ action: 'allow' }));
    await expect(callHook(hook(), { tool: 't' }, Answer)).resolves.toMatchObject({
      ok: true,
      answer: { action: 'allow' },
    });
  });
});
