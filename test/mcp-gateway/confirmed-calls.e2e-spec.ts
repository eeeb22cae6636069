// Confirm-tier calls through the MCP gateway (apps/mcp-gateway/src/approvals/confirmed-calls.ts), driven by the official
// MCP client over streamable HTTP, in front of real servers: the published filesystem server (stdio), the repository's
// ops MCP server (streamable HTTP) and a counting test server. Approvals are the approval service's (its approvals API),
// decided by approvers through its REST API. What ran is counted at the server, read on disk, or read from the ops
// server's simulated infrastructure.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ledgerFields } from '@countersign/call-ledger';
import { InfraStore } from '@countersign/demo-infra';
import { createRedis, type RedisClient } from '@countersign/platform';
import { gatewayKeys } from '../../apps/mcp-gateway/src/approvals/call-record-store';
import type { RunningMcpGateway } from '../../apps/mcp-gateway/src/bootstrap';
import { approvalOf, GatewayHarness, resultText as text } from '../support/gateway-harness';
import { testToken } from '../support/principals';
import { TEST_REDIS_URL, waitFor } from '../support/redis';

jest.setTimeout(60_000);

describe('MCP gateway', () => {
  let h: GatewayHarness;
  /** Holds a confirm-tier call 600 ms: an undecided call answers quickly. */
  let gateway: RunningMcpGateway;
  let redis: RedisClient;
  let infra: InfraStore;
  let alice: Client;

  beforeAll(async () => {
    h = await GatewayHarness.start('gateway');
    gateway = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
    alice = await h.client(gateway.url!, 'alice');
    redis = createRedis({ url: TEST_REDIS_URL });
    infra = new InfraStore(redis, h.keyPrefix);
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
  });

  const restarts = async (service: string) => (await infra.service(service))!.restarts;

  describe('confirm-tier calls', () => {
    it('answer "waiting for approval" with the inbox link and expiry, and send the server nothing', async () => {
      const before = await restarts('payments');
      const result = await alice.callTool({
        name: 'ops__restart_service',
        arguments: { service: 'payments' },
      });
      expect(result.isError).toBe(true);
      const approval = result._meta?.['countersign/approval'] as {
        approvalId: string;
        inboxUrl: string;
        expiresAt: string;
      };
      expect(approval).toMatchObject({ status: 'pending', inboxUrl: expect.stringContaining('/inbox') });
      expect(text(result)).toContain('waiting for approval');
      expect(text(result)).toContain(approval.inboxUrl);
      expect(text(result)).toContain(approval.expiresAt);
      expect(text(result)).toContain('call this tool again with exactly the same arguments');
      expect(await h.approvals.pendingFor('bob')).toContain(approval.approvalId);
      expect(await restarts('payments')).toBe(before);
    });

    it('after approval an identical call runs it exactly once, and the next gets the same result', async () => {
      const args = { service: 'api' };
      const before = await restarts('api');
      const first = await alice.callTool({ name: 'ops__restart_service', arguments: args });
      const { approvalId } = first._meta?.['countersign/approval'] as { approvalId: string };
      const again = await alice.callTool({ name: 'ops__restart_service', arguments: { ...args } });
      expect((again._meta?.['countersign/approval'] as { approvalId: string }).approvalId).toBe(approvalId);
      expect(await restarts('api')).toBe(before);

      await h.approvals.approve(approvalId);
      const ran = await alice.callTool({ name: 'ops__restart_service', arguments: args });
      expect(ran.isError).toBeFalsy();
      expect(text(ran)).toContain('"name":"api"');
      expect(await restarts('api')).toBe(before + 1);

      const cached = await alice.callTool({ name: 'ops__restart_service', arguments: args });
      expect(cached).toEqual(ran);
      expect(await restarts('api')).toBe(before + 1);
    });

    it('run once when identical calls arrive together after approval', async () => {
      const args = { text: 'together' };
      const first = await alice.callTool({ name: 'notes__write_note', arguments: args });
      await h.approvals.approve(approvalOf(first));
      const otherSession = await h.client(gateway.url!, 'alice');
      const results = await Promise.all([
        alice.callTool({ name: 'notes__write_note', arguments: args }),
        otherSession.callTool({ name: 'notes__write_note', arguments: args }),
        alice.callTool({ name: 'notes__write_note', arguments: { ...args } }),
      ]);
      expect(h.notes.calls.filter((c) => c.tool === 'write_note' && c.args.text === 'together')).toHaveLength(
        1,
      );
      const ran = results.find((r) => !r.isError)!;
      expect(text(ran)).toBe('noted: together');
      // The others either got the result or were told it is running for an identical call (never a second run).
      for (const result of results)
        expect(text(result)).toMatch(/^noted: together$|is running for an identical call/);
      expect(await alice.callTool({ name: 'notes__write_note', arguments: args })).toEqual(ran);
    });

    it("are another principal's own: the same arguments from bob are another approval", async () => {
      const args = { text: 'whose call' };
      const fromAlice = await alice.callTool({ name: 'notes__write_note', arguments: args });
      const bob = await h.client(gateway.url!, 'bob');
      const fromBob = await bob.callTool({ name: 'notes__write_note', arguments: args });
      expect(approvalOf(fromBob)).not.toBe(approvalOf(fromAlice));
    });

    it('denied: identical calls get the refusal with its reason, and the server gets nothing', async () => {
      const args = { text: 'deny me' };
      const first = await alice.callTool({ name: 'notes__write_note', arguments: args });
      await h.approvals.deny(approvalOf(first), 'not during the freeze');
      for (let i = 0; i < 2; i++) {
        const refused = await alice.callTool({ name: 'notes__write_note', arguments: args });
        expect(refused.isError).toBe(true);
        expect(text(refused)).toContain('denied by the user. Reason: not during the freeze');
      }
      expect(h.notes.calls.filter((c) => c.args.text === 'deny me')).toHaveLength(0);
    });

    it("responded: the result carries the approver's text, naming them, as an error result; the server gets nothing", async () => {
      const args = { text: 'respond to me' };
      const first = await alice.callTool({ name: 'notes__write_note', arguments: args });
      const words = 'Write it to the team channel instead, not to notes.';
      await h.approvals.respond(approvalOf(first), words);
      const answered = await alice.callTool({ name: 'notes__write_note', arguments: args });
      // An error result: the tool did not produce it, and a client that checks a tool's output schema still shows it.
      expect(answered.isError).toBe(true);
      expect(text(answered)).toBe(
        'Tool "notes__write_note" was not run: the approver (bob) responded instead of approving. ' +
          `This is their response, not the tool's output: ${words}`,
      );
      expect(answered._meta?.['countersign/approval']).toMatchObject({
        status: 'responded',
        response: words,
        decidedBy: 'person',
      });
      expect(h.notes.calls.filter((c) => c.args.text === 'respond to me')).toHaveLength(0);
    });

    it('expired: identical calls are told it expired, and the server gets nothing', async () => {
      const args = { text: 'too late' };
      const first = await alice.callTool({ name: 'short_write_note', arguments: args });
      const id = approvalOf(first);
      await waitFor(
        async () =>
          (await h.approvals.api<{ status: string }>('GET', `/approvals/${id}`, 'bob')).json.status ===
          'expired',
        'the expiry',
      );
      const refused = await alice.callTool({ name: 'short_write_note', arguments: args });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('expired');
      expect(h.notes.calls.filter((c) => c.args.text === 'too late')).toHaveLength(0);
    });

    it('write through the filesystem server once: a file removed afterwards is not written again', async () => {
      const target = join(h.dir, 'approved.txt');
      const args = { path: target, content: 'v1' };
      const first = await alice.callTool({ name: 'fs__write_file', arguments: args });
      expect(first.isError).toBe(true);
      expect(existsSync(target)).toBe(false);
      await h.approvals.approve(approvalOf(first));
      const ran = await alice.callTool({ name: 'fs__write_file', arguments: args });
      expect(ran.isError).toBeFalsy();
      expect(readFileSync(target, 'utf8')).toBe('v1');
      rmSync(target);
      expect(await alice.callTool({ name: 'fs__write_file', arguments: args })).toEqual(ran);
      expect(existsSync(target)).toBe(false);
    });

    it('never run a call a gateway claimed but did not record (it stopped mid-run): it may have run', async () => {
      const args = { text: 'claimed elsewhere' };
      const first = await alice.callTool({ name: 'notes__write_note', arguments: args });
      const id = approvalOf(first);
      await h.approvals.approve(id);
      // What a gateway that died between its claim and its record leaves behind: a claimed approval, no outcome.
      const view = await h.approvals.api<{ fingerprint: string }>(
        'GET',
        `/external-approvals/${id}?onBehalfOf=alice`,
        'mcp-gateway',
      );
      const claimed = await h.approvals.api('POST', `/external-approvals/${id}/claim`, 'mcp-gateway', {
        fingerprint: view.json.fingerprint,
        onBehalfOf: 'alice',
      });
      expect(claimed.status).toBe(200);
      for (let i = 0; i < 2; i++) {
        const answer = await alice.callTool({ name: 'notes__write_note', arguments: args });
        expect(answer.isError).toBe(true);
        expect(text(answer)).toContain('it may or may not have run, and it will not be run again');
      }
      expect(h.notes.calls.filter((c) => c.args.text === 'claimed elsewhere')).toHaveLength(0);
    });

    it('wait for a live runner of an identical call, and take over a dead one: the call runs once', async () => {
      const args = { text: 'runner died' };
      const first = await alice.callTool({ name: 'notes__write_note', arguments: args });
      const id = approvalOf(first);
      await h.approvals.approve(id);
      // What a gateway that took the run and stopped before its claim leaves behind: the record executing, its token.
      const view = await h.approvals.api<{ fingerprint: string }>(
        'GET',
        `/external-approvals/${id}?onBehalfOf=alice`,
        'mcp-gateway',
      );
      const key = gatewayKeys(h.keyPrefix).call('alice', view.json.fingerprint);
      const ledger = ledgerFields('');
      await redis.hset(
        key,
        ledger.state,
        'executing',
        ledger.token,
        'gone-runner',
        ledger.heartbeat,
        Date.now(),
      );
      const waited = await alice.callTool({ name: 'notes__write_note', arguments: args });
      expect(text(waited)).toContain('is running for an identical call');
      expect(h.notes.calls.filter((c) => c.args.text === 'runner died')).toHaveLength(0);

      await redis.hset(key, ledger.heartbeat, '1'); // its heartbeat went stale: that gateway is gone
      const ran = await alice.callTool({ name: 'notes__write_note', arguments: args });
      expect(text(ran)).toBe('noted: runner died');
      expect(h.notes.calls.filter((c) => c.args.text === 'runner died')).toHaveLength(1);
      expect(await alice.callTool({ name: 'notes__write_note', arguments: args })).toEqual(ran);
    });

    it('are asked about again when the server changed the tool after approval', async () => {
      const args = { text: 'changed tool' };
      const first = await alice.callTool({ name: 'short_write_note', arguments: args });
      await h.approvals.approve(approvalOf(first));
      await h.notes.changeTool('write_note', { description: 'Writes a note (v2).' }, false);
      const again = await alice.callTool({ name: 'short_write_note', arguments: args });
      expect(again.isError).toBe(true);
      expect(approvalOf(again)).not.toBe(approvalOf(first));
      expect(h.notes.calls.filter((c) => c.args.text === 'changed tool')).toHaveLength(0);
      await h.notes.changeTool('write_note', { description: 'Writes a note.' });
    });
  });

  describe('clients that go away', () => {
    it('leave their approval pending: nothing runs until an identical call comes back', async () => {
      const patient = await h.startGateway({ hold: { maxMs: 20_000, progressEveryMs: 250 } });
      const transport = new StreamableHTTPClientTransport(new URL(patient.url!), {
        requestInit: { headers: { Authorization: `Bearer ${testToken('alice')}` } },
      });
      const leaving = new Client({ name: 'leaving', version: '1.0.0' });
      await leaving.connect(transport);
      const args = { text: 'gone' };
      const earlier = await h.approvals.pendingFor('bob');
      let held = false;
      const call = leaving
        .callTool({ name: 'notes__write_note', arguments: args }, undefined, {
          onprogress: () => (held = true),
        })
        .catch(() => 'disconnected');
      await waitFor(() => held, 'the call to be held');
      const pending = await h.approvals.waitForPending('bob', earlier);
      await transport.close();
      expect(await call).toBe('disconnected');
      // The gateway learns of the dropped connection from its socket; give it a moment before the decision lands.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await h.approvals.approve(pending);
      // The held request would have noticed the decision at once; it is gone, so nothing may run.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(h.notes.calls.filter((c) => c.args.text === 'gone')).toHaveLength(0);
      const view = await h.approvals.api<{ status: string; claim?: unknown }>(
        'GET',
        `/external-approvals/${pending}?onBehalfOf=alice`,
        'mcp-gateway',
      );
      expect(view.json).toMatchObject({ status: 'allow' });
      expect(view.json.claim).toBeUndefined();

      const back = await h.client(patient.url!, 'alice');
      const ran = await back.callTool({ name: 'notes__write_note', arguments: args });
      expect(text(ran)).toBe('noted: gone');
      expect(h.notes.calls.filter((c) => c.args.text === 'gone')).toHaveLength(1);
    });
  });

  describe('durability', () => {
    it('a result outlives the gateway: a new one answers identical calls with it, and an approval given meanwhile runs once', async () => {
      const other = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
      const before = await restarts('web');
      const first = await alice.callTool({ name: 'ops__restart_service', arguments: { service: 'web' } });
      await other.close();
      await h.approvals.approve(approvalOf(first));
      const next = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
      const client = await h.client(next.url!, 'alice');
      const ran = await client.callTool({ name: 'ops__restart_service', arguments: { service: 'web' } });
      expect(ran.isError).toBeFalsy();
      expect(await restarts('web')).toBe(before + 1);
      const third = await h.startGateway({ hold: { maxMs: 600, progressEveryMs: 250 } });
      const later = await h.client(third.url!, 'alice');
      expect(await later.callTool({ name: 'ops__restart_service', arguments: { service: 'web' } })).toEqual(
        ran,
      );
      expect(await restarts('web')).toBe(before + 1);
    });
  });
});
