// Admission hooks in the MCP gateway (GATEWAY_CONFIG `admission`, the same libs/admission client as the worker's),
// driven by the official MCP client, against a real local hook server that checks every request's signature.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AuditLog } from '@countersign/audit';
import { createRedis, type RedisClient } from '@countersign/platform';
import { gatewayRunId } from '../../apps/mcp-gateway/src/calls/gateway-calls';
import { testAuditKeyring } from '../support/audit';
import { GatewayHarness, resultText as text } from '../support/gateway-harness';
import { HOOK_SECRET, HookServer } from '../support/hook-server';
import { TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(60_000);

describe('MCP gateway admission hooks', () => {
  let h: GatewayHarness;
  const hook = new HookServer();
  let redis: RedisClient;
  let audit: AuditLog;
  let alice: Client;

  const status = (service: string) =>
    alice.callTool({ name: 'ops__get_service_status', arguments: { service } });
  const lastCallId = () => hook.calls.at(-1)!.callId;
  const auditOf = async (callId: string) =>
    (await audit.read({ runId: gatewayRunId('alice'), callId })).filter((e) =>
      e.type.startsWith('admission.'),
    );

  beforeAll(async () => {
    await hook.start();
    h = await GatewayHarness.start('gateway-admission');
    const base = `http://127.0.0.1:${hook.port}`;
    const gateway = await h.startGateway(
      {
        admission: {
          beforeTool: [
            {
              name: 'gate',
              tools: ['ops__*'],
              url: `${base}/before`,
              secretEnv: 'HOOK_SECRET',
              timeoutMs: 1_000,
            },
          ],
          afterTool: [
            {
              name: 'redactor',
              tools: ['ops__get_*'],
              url: `${base}/after`,
              secretEnv: 'HOOK_SECRET',
              timeoutMs: 1_000,
            },
          ],
        },
      },
      { HOOK_SECRET },
    );
    alice = await h.client(gateway.url!, 'alice');
    redis = createRedis({ url: TEST_REDIS_URL });
    audit = new AuditLog(redis, h.keyPrefix, 'test', testAuditKeyring());
  });
  afterEach(() => {
    hook.before = () => ({ json: { action: 'allow' } });
    hook.after = () => ({ json: { action: 'keep' } });
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
    await hook.stop();
  });

  it('allow: the call is relayed; the hook got it signed, with the caller and the gateway as agent', async () => {
    const result = await status('web');
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('web');
    const before = hook.calls.find((c) => c.stage === 'before_tool' && c.callId === lastCallId())!;
    expect(before).toMatchObject({
      signed: true,
      tool: 'ops__get_service_status',
      arguments: { service: 'web' },
      principal: 'alice',
      agent: 'mcp-gateway',
    });
    expect((await auditOf(lastCallId())).map((e) => e.detail.outcome)).toEqual(['allow', 'keep']);
  });

  it('deny: the caller gets the reason as an error result and nothing is relayed', async () => {
    hook.before = () => ({ json: { action: 'deny', reason: 'change freeze' } });
    const result = await status('web');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/guard "gate" denied it: change freeze/);
    expect(hook.calls.filter((c) => c.callId === lastCallId()).map((c) => c.stage)).toEqual(['before_tool']);
  });

  it('skip: the caller gets the content, the tool is not relayed', async () => {
    hook.before = () => ({ json: { action: 'skip', content: 'from the cache' } });
    const result = await status('api');
    expect(text(result)).toBe('from the cache');
    expect(hook.calls.filter((c) => c.callId === lastCallId()).map((c) => c.stage)).toEqual(['before_tool']);
  });

  it('confirm naming approvers: refused, since the gateway cannot send a call to named groups (fail closed)', async () => {
    hook.before = () => ({ json: { action: 'confirm', groups: ['finance'], quorum: 2 } });
    const result = await status('payments');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /not run: gate asks for group finance with quorum 2, and the MCP gateway cannot send a call to named approvers/,
    );
    expect(hook.calls.filter((c) => c.callId === lastCallId()).map((c) => c.stage)).toEqual(['before_tool']);
  });

  it.each([
    ['answers 500', { status: 500, raw: 'boom' } as const, /answered HTTP 500/],
    ['times out', 'hang' as const, /timed out after 1000 ms/],
  ])('a hook that %s refuses the call, audited as failed', async (_case, reply, why) => {
    hook.before = () => reply;
    const result = await status('web');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(why);
    const callId = lastCallId();
    expect(hook.calls.filter((c) => c.callId === callId).map((c) => c.stage)).toEqual(['before_tool']);
    expect(await auditOf(callId)).toEqual([
      expect.objectContaining({
        type: 'admission.failed',
        detail: expect.objectContaining({ reason: expect.stringMatching(why) }),
      }),
    ]);
  });

  it('after-tool: a replacement is what the caller gets; a failing after-hook keeps the result', async () => {
    hook.after = () => ({
      json: { action: 'replace', result: { content: [{ type: 'text', text: '[redacted]' }] } },
    });
    expect(text(await status('payments'))).toBe('[redacted]');
    hook.after = () => ({ json: { action: 'replace', result: 'plain words' } });
    expect(text(await status('payments'))).toBe('plain words');
    hook.after = () => ({ status: 500, raw: 'boom' });
    expect(text(await status('payments'))).toContain('payments');
    expect((await auditOf(lastCallId())).map((e) => e.type)).toEqual([
      'admission.answered',
      'admission.failed',
    ]);
  });
});
