import { z } from 'zod';
import { AccessControl } from './access-control';
import { caller, type CountingTool, countingTool } from './__fixtures__/counting-tools';
import type { ConfirmationHandler } from './confirmation-handler';
import { ConfirmationPolicy } from './confirmation-policy';
import { type CallDecision, DecisionBook } from './decisions';
import { fingerprint, printableReadableForm } from './fingerprint';
import { preconditionDigest } from './precondition';
import type { AfterToolContext, BeforeToolContext, ToolPlugin } from './plugins';
import { defineTool, type ToolCall } from './tool';
import type { ToolCallOutcome } from './tool-call-outcome';
import { type PipelineOptions, ToolCallPipeline } from './tool-call-pipeline';
import { ToolRegistry } from './tool-registry';

const restart = (id = 'call-1', service = 'api'): ToolCall => ({
  id,
  name: 'restart_service',
  args: { service },
});
const approve = (call: ToolCall, extra: Partial<CallDecision> = {}): CallDecision => ({
  callId: call.id,
  decision: 'approve',
  decidedBy: 'person',
  fingerprint: fingerprint(call.name, call.args),
  ...extra,
});
const deny = (call: ToolCall, reason?: string): CallDecision => approve(call, { decision: 'deny', reason });

/** A pipeline over three counting tools, one per tier; `options` overrides anything. */
function setup(options: Partial<PipelineOptions> = {}) {
  const tools = {
    read_logs: countingTool('read_logs', 'auto'),
    restart_service: countingTool('restart_service', 'confirm'),
    drop_database: countingTool('drop_database', 'manual_only'),
  };
  const registry = new ToolRegistry(Object.values(tools).map((t) => t.definition));
  const sut = new ToolCallPipeline({ registry, ...options });
  const totalExecutions = () => Object.values(tools).reduce((n, t: CountingTool) => n + t.executions, 0);
  return { sut, tools, totalExecutions };
}

const ctx = (decisions: CallDecision[] = []) => ({ ...caller, decisions: new DecisionBook(decisions) });

describe('ToolCallPipeline', () => {
  describe('registry', () => {
    it('returns an error result naming an unregistered tool and executes nothing', async () => {
      const { sut, totalExecutions } = setup();
      const outcome = await sut.evaluate({ id: 'c1', name: 'format_disk', args: {} }, ctx());
      expect(outcome).toMatchObject({ kind: 'error', callId: 'c1', toolName: 'format_disk' });
      expect(outcome.content).toMatch(/Unknown tool "format_disk"/);
      expect(totalExecutions()).toBe(0);
    });

    it.each([
      ['a missing field', {}],
      ['a wrong type', { service: 42 }],
      ['an empty string', { service: '' }],
      ['not an object', 'api'],
      ['null', null],
    ])('returns an error result (not an exception) for arguments with %s', async (_case, args) => {
      const { sut, tools } = setup();
      const outcome = await sut.evaluate({ id: 'c1', name: 'read_logs', args }, ctx());
      expect(outcome.kind).toBe('error');
      expect(outcome.content).toMatch(/Invalid arguments for tool "read_logs"/);
      expect(tools.read_logs.executions).toBe(0);
    });

    it('names the offending field of invalid arguments', async () => {
      const { sut } = setup();
      const outcome = await sut.evaluate({ id: 'c1', name: 'read_logs', args: { service: 7 } }, ctx());
      expect(outcome.content).toMatch(/service:/);
    });

    it('returns an error result when the argument schema itself throws', async () => {
      let executions = 0;
      const throwingSchema = defineTool({
        name: 'strict',
        description: 'schema with a refinement that throws',
        args: z.object({
          a: z.string().refine(() => {
            throw new Error('refinement exploded');
          }),
        }),
        handler: () => executions++,
      });
      const sut = new ToolCallPipeline({ registry: new ToolRegistry([throwingSchema]) });
      const outcome = await sut.evaluate({ id: 'c1', name: 'strict', args: { a: 'x' } }, ctx());
      expect(outcome.kind).toBe('error');
      expect(outcome.content).toMatch(/refinement exploded/);
      expect(executions).toBe(0);
    });

    it('returns an error result for a confirm call whose parsed arguments have no JSON form', async () => {
      let executions = 0;
      const bigint = defineTool({
        name: 'bigint',
        description: 'schema whose transform yields a BigInt',
        args: z.object({ n: z.number().transform((n) => BigInt(n)) }),
        tier: 'confirm',
        handler: () => executions++,
      });
      const sut = new ToolCallPipeline({ registry: new ToolRegistry([bigint]) });
      const outcome = await sut.evaluate({ id: 'c1', name: 'bigint', args: { n: 1 } }, ctx());
      expect(outcome.kind).toBe('error');
      expect(outcome.content).toMatch(/no JSON form/);
      expect(executions).toBe(0);
    });

    it('refuses to park a confirm call whose arguments are too large to send for approval, naming the size', async () => {
      let executions = 0;
      const upload = defineTool({
        name: 'upload',
        description: 'takes a blob',
        args: z.object({ blob: z.string() }),
        tier: 'confirm',
        handler: () => executions++,
      });
      const sut = new ToolCallPipeline({ registry: new ToolRegistry([upload]) });
      const fits = await sut.evaluate(
        { id: 'c1', name: 'upload', args: { blob: 'x'.repeat(60_000) } },
        ctx(),
      );
      expect(fits.kind).toBe('pending_confirmation');
      const tooBig = await sut.evaluate(
        { id: 'c2', name: 'upload', args: { blob: 'x'.repeat(70_000) } },
        ctx(),
      );
      expect(tooBig.kind).toBe('error');
      expect(tooBig.content).toMatch(/70011 bytes as JSON; at most 65536/);
      expect(executions).toBe(0);
    });

    it('hands the handler the parsed arguments and fingerprints exactly those', async () => {
      const { sut, tools } = setup();
      const call = { id: 'c1', name: 'restart_service', args: { service: 'api', unknownKey: 'stripped' } };
      const pending = await sut.evaluate(call, ctx());
      expect(pending).toMatchObject({ kind: 'pending_confirmation', args: { service: 'api' } });
      expect(pending.kind === 'pending_confirmation' && pending.fingerprint).toBe(
        fingerprint('restart_service', { service: 'api' }),
      );
      await sut.evaluate(call, ctx([approve({ ...call, args: { service: 'api' } })]));
      expect(tools.restart_service.seen).toEqual([{ service: 'api' }]);
    });
  });

  describe('RBAC', () => {
    const acl = () =>
      new AccessControl()
        .defineRole('ops', { allow: ['tool:*'] })
        .defineRole('no-logs', { deny: ['tool:read_logs'] })
        .defineRole('reader', { allow: ['tool:read_logs'] })
        .assign('alice', 'ops', 'no-logs')
        .assign('bob', 'reader');

    it('lets a deny beat an allow and does not execute', async () => {
      const { sut, tools } = setup({ accessControl: acl() });
      const outcome = await sut.evaluate({ id: 'c1', name: 'read_logs', args: { service: 'api' } }, ctx());
      expect(outcome).toMatchObject({ kind: 'denied', by: 'rbac' });
      expect(tools.read_logs.executions).toBe(0);
    });

    it('denies when no role allows the tool and names the missing permission', async () => {
      const { sut, tools } = setup({ accessControl: acl() });
      const outcome = await sut.evaluate(restart(), { ...ctx(), userId: 'bob' });
      expect(outcome).toMatchObject({ kind: 'denied', by: 'rbac' });
      expect(outcome.content).toContain('tool:restart_service');
      expect(tools.restart_service.executions).toBe(0);
    });

    it('runs an allowed call', async () => {
      const { sut, tools } = setup({ accessControl: acl() });
      const outcome = await sut.evaluate(
        { id: 'c1', name: 'read_logs', args: { service: 'api' } },
        { ...ctx(), userId: 'bob' },
      );
      expect(outcome).toMatchObject({ kind: 'executed', result: 'read_logs api' });
      expect(tools.read_logs.executions).toBe(1);
    });

    it('denies before looking at the arguments, so a refused user learns nothing of the schema', async () => {
      const { sut } = setup({ accessControl: acl() });
      const outcome = await sut.evaluate(
        { id: 'c1', name: 'restart_service', args: { bogus: 1 } },
        { ...ctx(), userId: 'bob' },
      );
      expect(outcome).toMatchObject({ kind: 'denied', by: 'rbac' });
      expect(outcome.content).not.toMatch(/argument/i);
    });

    it('denies before any before-callback is consulted', async () => {
      const beforeTool = jest.fn();
      const { sut } = setup({ accessControl: acl(), plugins: [{ name: 'spy', beforeTool }] });
      await sut.evaluate({ id: 'c1', name: 'read_logs', args: { service: 'api' } }, ctx());
      expect(beforeTool).not.toHaveBeenCalled();
    });

    it('a person approving an RBAC-denied call does not make it run', async () => {
      const { sut, tools } = setup({ accessControl: acl() });
      const outcome = await sut.evaluate(restart(), { ...ctx([approve(restart())]), userId: 'bob' });
      expect(outcome).toMatchObject({ kind: 'denied', by: 'rbac' });
      expect(tools.restart_service.executions).toBe(0);
    });
  });

  describe('before-tool callbacks', () => {
    const logs = { id: 'c1', name: 'read_logs', args: { service: 'api' } };

    it.each<[string, ToolPlugin['beforeTool']]>([
      ['returns nothing', () => undefined],
      ['returns allow', () => ({ action: 'allow' })],
      ['resolves allow asynchronously', async () => ({ action: 'allow' })],
    ])('runs the tool when the callback %s', async (_case, beforeTool) => {
      const { sut, tools } = setup({ plugins: [{ name: 'guard', beforeTool }] });
      await expect(sut.evaluate(logs, ctx())).resolves.toMatchObject({ kind: 'executed' });
      expect(tools.read_logs.executions).toBe(1);
    });

    it('replaces the result with the content of a skip and does not execute', async () => {
      const { sut, tools } = setup({
        plugins: [{ name: 'cache', beforeTool: () => ({ action: 'skip', content: 'cached logs' }) }],
      });
      const outcome = await sut.evaluate(logs, ctx());
      expect(outcome).toMatchObject({ kind: 'skipped', plugin: 'cache', content: 'cached logs' });
      expect(tools.read_logs.executions).toBe(0);
    });

    it('aborts the run and does not execute', async () => {
      const { sut, tools } = setup({
        plugins: [{ name: 'budget', beforeTool: () => ({ action: 'abort', reason: 'budget exhausted' }) }],
      });
      const outcome = await sut.evaluate(logs, ctx());
      expect(outcome).toMatchObject({ kind: 'aborted', plugin: 'budget', reason: 'budget exhausted' });
      expect(outcome.content).toContain('budget exhausted');
      expect(tools.read_logs.executions).toBe(0);
    });

    it.each<[string, ToolPlugin['beforeTool']]>([
      [
        'throws',
        () => {
          throw new Error('guard db down');
        },
      ],
      ['rejects', () => Promise.reject(new Error('guard db down'))],
    ])(
      'refuses the call (fail closed) when a callback %s, saying the guard failed',
      async (_case, beforeTool) => {
        const { sut, tools } = setup({ plugins: [{ name: 'pii-guard', beforeTool }] });
        const outcome = await sut.evaluate(logs, ctx());
        expect(outcome).toMatchObject({ kind: 'denied', by: 'guard' });
        expect(outcome.content).toMatch(/guard "pii-guard" failed \(guard db down\)/);
        expect(tools.read_logs.executions).toBe(0);
      },
    );

    it('refuses the call when a callback returns an unknown verdict', async () => {
      const { sut, tools } = setup({
        plugins: [{ name: 'odd', beforeTool: () => ({ action: 'maybe' }) as never }],
      });
      await expect(sut.evaluate(logs, ctx())).resolves.toMatchObject({ kind: 'denied', by: 'guard' });
      expect(tools.read_logs.executions).toBe(0);
    });

    it('refuses a confirm call with an approve decision when its guard throws', async () => {
      const { sut, tools } = setup({
        plugins: [
          {
            name: 'g',
            beforeTool: () => {
              throw new Error('x');
            },
          },
        ],
      });
      await expect(sut.evaluate(restart(), ctx([approve(restart())]))).resolves.toMatchObject({
        kind: 'denied',
        by: 'guard',
      });
      expect(tools.restart_service.executions).toBe(0);
    });

    it('consults callbacks in order and stops at the first that does not allow', async () => {
      const order: string[] = [];
      const { sut } = setup({
        plugins: [
          { name: 'a', beforeTool: () => void order.push('a') },
          { name: 'b', beforeTool: () => (order.push('b'), { action: 'skip', content: 'b' }) },
          { name: 'c', beforeTool: () => void order.push('c') },
        ],
      });
      await sut.evaluate(logs, ctx());
      expect(order).toEqual(['a', 'b']);
    });

    it('shows callbacks the caller scopes, the parsed arguments and the effective tier', async () => {
      const seen: BeforeToolContext[] = [];
      const { sut } = setup({
        policy: new ConfirmationPolicy().requireConfirmation('read_logs'),
        plugins: [{ name: 'spy', beforeTool: (c) => void seen.push(c) }],
      });
      await sut.evaluate(logs, { ...ctx(), scopes: ['admin', 'oncall'] });
      expect(seen).toEqual([
        {
          runId: 'run-1',
          agent: 'ops',
          userId: 'alice',
          scopes: ['admin', 'oncall'],
          callId: 'c1',
          toolName: 'read_logs',
          args: { service: 'api' },
          tier: 'confirm',
        },
      ]);
    });

    it('lets a callback refuse by scope', async () => {
      const adminsOnly: ToolPlugin = {
        name: 'admins-only',
        beforeTool: (c) =>
          c.scopes.includes('admin') ? undefined : { action: 'skip', content: 'admins only' },
      };
      const { sut, tools } = setup({ plugins: [adminsOnly] });
      await expect(sut.evaluate(logs, { ...ctx(), scopes: [] })).resolves.toMatchObject({ kind: 'skipped' });
      await expect(sut.evaluate(logs, { ...ctx(), scopes: ['admin'] })).resolves.toMatchObject({
        kind: 'executed',
      });
      expect(tools.read_logs.executions).toBe(1);
    });
  });

  describe('after-tool callbacks', () => {
    const logs = { id: 'c1', name: 'read_logs', args: { service: 'api' } };

    it('replaces the result', async () => {
      const { sut } = setup({ plugins: [{ name: 'redact', afterTool: () => ({ result: '[redacted]' }) }] });
      await expect(sut.evaluate(logs, ctx())).resolves.toMatchObject({
        kind: 'executed',
        result: '[redacted]',
        content: '[redacted]',
      });
    });

    it('leaves the result alone when it returns nothing', async () => {
      const { sut } = setup({ plugins: [{ name: 'observe', afterTool: () => undefined }] });
      await expect(sut.evaluate(logs, ctx())).resolves.toMatchObject({ result: 'read_logs api' });
    });

    it.each<[string, ToolPlugin['afterTool']]>([
      [
        'throws',
        () => {
          throw new Error('after boom');
        },
      ],
      ['rejects', () => Promise.reject(new Error('after boom'))],
    ])("leaves the tool's own result in place when it %s", async (_case, afterTool) => {
      const { sut, tools } = setup({ plugins: [{ name: 'broken', afterTool }] });
      await expect(sut.evaluate(logs, ctx())).resolves.toMatchObject({
        kind: 'executed',
        result: 'read_logs api',
      });
      expect(tools.read_logs.executions).toBe(1);
    });

    it('chains replacements and sees the current result and caller scopes', async () => {
      const seen: AfterToolContext[] = [];
      const { sut } = setup({
        plugins: [
          { name: 'upper', afterTool: (c) => ({ result: String(c.result).toUpperCase() }) },
          { name: 'spy', afterTool: (c) => void seen.push(c) },
        ],
      });
      await expect(sut.evaluate(logs, ctx())).resolves.toMatchObject({ result: 'READ_LOGS API' });
      expect(seen[0]).toMatchObject({
        result: 'READ_LOGS API',
        scopes: ['admin'],
        callId: 'c1',
        tier: 'auto',
      });
    });
  });

  describe('execution', () => {
    it('runs an auto tool at once', async () => {
      const { sut, tools } = setup();
      const outcome = await sut.evaluate({ id: 'c1', name: 'read_logs', args: { service: 'api' } }, ctx());
      expect(outcome).toEqual({
        kind: 'executed',
        callId: 'c1',
        toolName: 'read_logs',
        result: 'read_logs api',
        content: 'read_logs api',
        approvedBy: 'auto',
      });
      expect(tools.read_logs.executions).toBe(1);
    });

    it('returns an error result when the handler throws', async () => {
      const boom = countingTool('boom', 'auto', () => {
        throw new Error('disk full');
      });
      const sut = new ToolCallPipeline({ registry: new ToolRegistry([boom.definition]) });
      const outcome = await sut.evaluate({ id: 'c1', name: 'boom', args: { service: 'api' } }, ctx());
      expect(outcome).toMatchObject({ kind: 'error', message: 'disk full' });
      expect(outcome.content).toMatch(/"boom" failed: disk full/);
    });

    it('gives the model JSON for a non-string result', async () => {
      const json = countingTool('json', 'auto', () => ({ ok: true, n: [1] }));
      const sut = new ToolCallPipeline({ registry: new ToolRegistry([json.definition]) });
      const outcome = await sut.evaluate({ id: 'c1', name: 'json', args: { service: 'api' } }, ctx());
      expect(outcome.content).toBe('{"ok":true,"n":[1]}');
    });

    it("tells the handler who is calling and which call it is, and nothing about the run's decisions", async () => {
      const contexts: unknown[] = [];
      const spy = countingTool('spy', 'auto', (_args, c) => void contexts.push(c));
      const sut = new ToolCallPipeline({ registry: new ToolRegistry([spy.definition]) });
      await sut.evaluate({ id: 'c9', name: 'spy', args: { service: 'api' } }, ctx());
      expect(contexts).toEqual([{ ...caller, callId: 'c9' }]);
    });

    it('authorize decides without executing; execute then runs the call once', async () => {
      const { sut, tools } = setup();
      const ready = await sut.authorize({ id: 'c1', name: 'read_logs', args: { service: 'api' } }, ctx());
      expect(ready).toMatchObject({ kind: 'ready', approvedBy: 'auto' });
      expect(tools.read_logs.executions).toBe(0);
      if (ready.kind !== 'ready') throw new Error('expected ready');
      await expect(sut.execute(ready, caller)).resolves.toMatchObject({ kind: 'executed' });
      expect(tools.read_logs.executions).toBe(1);
    });
  });

  describe('tiers and confirmation policy', () => {
    it('pauses a confirm tool for a decision, carrying what an approver needs', async () => {
      const { sut, tools } = setup();
      const outcome = await sut.evaluate(restart(), ctx());
      expect(outcome).toMatchObject({
        kind: 'pending_confirmation',
        callId: 'call-1',
        toolName: 'restart_service',
        args: { service: 'api' },
        tier: 'confirm',
        fingerprint: fingerprint('restart_service', { service: 'api' }),
        definitionHash: sut.registry.get('restart_service')!.definitionHash,
      });
      expect(outcome.kind === 'pending_confirmation' && outcome.mismatch).toBeUndefined();
      expect(tools.restart_service.executions).toBe(0);
    });

    it.each<[string, (p: ConfirmationPolicy) => ConfirmationPolicy]>([
      ['requireConfirmation(name)', (p) => p.requireConfirmation('read_logs')],
      ['requireConfirmationForAll()', (p) => p.requireConfirmationForAll()],
    ])('%s makes an auto tool wait for a decision', async (_case, configure) => {
      const { sut, tools } = setup({ policy: configure(new ConfirmationPolicy()) });
      const call = { id: 'c1', name: 'read_logs', args: { service: 'api' } };
      await expect(sut.evaluate(call, ctx())).resolves.toMatchObject({
        kind: 'pending_confirmation',
        tier: 'confirm',
      });
      expect(tools.read_logs.executions).toBe(0);
      await expect(sut.evaluate(call, ctx([approve(call)]))).resolves.toMatchObject({ kind: 'executed' });
      expect(tools.read_logs.executions).toBe(1);
    });

    it('requireConfirmation(name) leaves other auto tools alone', async () => {
      const { sut } = setup({ policy: new ConfirmationPolicy().requireConfirmation('other') });
      const call = { id: 'c1', name: 'read_logs', args: { service: 'api' } };
      await expect(sut.evaluate(call, ctx())).resolves.toMatchObject({ kind: 'executed' });
    });

    describe('manual_only', () => {
      const drop = { id: 'call-1', name: 'drop_database', args: { service: 'api' } };

      it('never executes and says a person must do it', async () => {
        const { sut, tools } = setup();
        const outcome = await sut.evaluate(drop, ctx());
        expect(outcome).toMatchObject({
          kind: 'manual_required',
          fingerprint: fingerprint('drop_database', { service: 'api' }),
          args: { service: 'api' },
        });
        expect(outcome.content).toMatch(/must be done by a person/);
        expect(tools.drop_database.executions).toBe(0);
      });

      it('still does not execute with an approve decision for the call', async () => {
        const { sut, tools } = setup();
        await expect(sut.evaluate(drop, ctx([approve(drop)]))).resolves.toMatchObject({
          kind: 'manual_required',
        });
        expect(tools.drop_database.executions).toBe(0);
      });

      it('still does not execute when a confirmation handler approves everything', async () => {
        const handler = jest.fn(() => ({ decision: 'approve' as const }));
        const { sut, tools } = setup({ confirmationHandler: handler });
        await expect(sut.evaluate(drop, ctx())).resolves.toMatchObject({ kind: 'manual_required' });
        expect(tools.drop_database.executions).toBe(0);
        expect(handler).not.toHaveBeenCalled();
      });
    });
  });

  describe('decisions', () => {
    it('executes a confirm call once a person approves exactly it', async () => {
      const { sut, tools } = setup();
      const outcome = await sut.evaluate(restart(), ctx([approve(restart())]));
      expect(outcome).toMatchObject({
        kind: 'executed',
        approvedBy: 'person',
        result: 'restart_service api',
      });
      expect(tools.restart_service.executions).toBe(1);
    });

    it('treats an unknown call ID as no decision (the call stays pending)', async () => {
      const { sut, tools } = setup();
      const outcome = await sut.evaluate(restart('call-1'), ctx([approve(restart('call-other'))]));
      expect(outcome.kind).toBe('pending_confirmation');
      expect(tools.restart_service.executions).toBe(0);
    });

    it('authorizes nothing with a decision keyed by tool name', async () => {
      const { sut, tools } = setup();
      const byName = approve(restart(), { callId: 'restart_service' });
      await expect(sut.evaluate(restart('call-1'), ctx([byName]))).resolves.toMatchObject({
        kind: 'pending_confirmation',
      });
      expect(tools.restart_service.executions).toBe(0);
    });

    it('never lets a decision for call X authorize call Y, even with identical arguments', async () => {
      const { sut, tools } = setup();
      const x = restart('call-x');
      const y = restart('call-y');
      await expect(sut.evaluate(y, ctx([approve(x)]))).resolves.toMatchObject({
        kind: 'pending_confirmation',
        callId: 'call-y',
      });
      expect(tools.restart_service.executions).toBe(0);
    });

    it('needs two decisions for two calls of one tool in one turn', async () => {
      const { sut, tools } = setup();
      const first = restart('call-1', 'api');
      const second = restart('call-2', 'api');
      const oneDecision = await sut.evaluateTurn([first, second], ctx([approve(first)]));
      expect(oneDecision.map((o) => o.kind)).toEqual(['executed', 'pending_confirmation']);
      expect(tools.restart_service.executions).toBe(1);

      const twoDecisions = await sut.evaluateTurn([first, second], ctx([approve(first), approve(second)]));
      expect(twoDecisions.map((o) => o.kind)).toEqual(['executed', 'executed']);
      expect(tools.restart_service.executions).toBe(3);
    });

    it('runs nothing of a turn that gives one call ID to two calls, and tells the model why', async () => {
      const consulted: string[] = [];
      const { sut, totalExecutions } = setup({
        plugins: [{ name: 'watch', beforeTool: (c) => void consulted.push(c.callId) }],
      });
      const first = restart('call-1', 'api');
      const twin = restart('call-1', 'db');
      const other = { id: 'call-2', name: 'read_logs', args: { service: 'api' } };
      const outcomes = await sut.evaluateTurn([first, other, twin], ctx([approve(first)]));
      expect(outcomes.map((o) => [o.callId, o.kind])).toEqual([
        ['call-1', 'error'],
        ['call-2', 'error'],
        ['call-1', 'error'],
      ]);
      for (const outcome of outcomes) {
        expect(outcome.content).toMatch(
          /^Nothing in this turn ran: call ID "call-1" was given to more than one/,
        );
        expect(outcome.content).toMatch(/each with a unique ID/);
      }
      expect(totalExecutions()).toBe(0);
      expect(consulted).toEqual([]);
    });

    it('names every repeated call ID of a turn', async () => {
      const { sut } = setup();
      const logs = (id: string) => ({ id, name: 'read_logs', args: { service: 'api' } });
      const outcomes = await sut.evaluateTurn([logs('a'), logs('b'), logs('a'), logs('b')], ctx());
      expect(outcomes[0].content).toMatch(/call IDs "a", "b" were given to more than one tool call/);
    });

    describe('fingerprint mismatch', () => {
      const approvedOther = approve(restart('call-1', 'db'), {
        shown: { toolName: 'restart_service', args: { service: 'db' } },
      });

      it('ignores a decision whose fingerprint does not match the call', async () => {
        const { sut, tools } = setup();
        const outcome = await sut.evaluate(restart('call-1', 'api'), ctx([approvedOther]));
        expect(outcome.kind).toBe('pending_confirmation');
        expect(tools.restart_service.executions).toBe(0);
      });

      it('carries both readable forms so a person can see what changed', async () => {
        const { sut } = setup();
        const outcome = await sut.evaluate(restart('call-1', 'api'), ctx([approvedOther]));
        expect(outcome.kind === 'pending_confirmation' && outcome.mismatch).toEqual({
          expected: printableReadableForm('restart_service', { service: 'api' }),
          shown: printableReadableForm('restart_service', { service: 'db' }),
          decisionFingerprint: approvedOther.fingerprint,
        });
        expect(outcome.kind === 'pending_confirmation' && outcome.mismatch?.expected).toBe(
          'restart_service ␟ {"service":"api"}',
        );
      });

      it('ignores a deny whose fingerprint does not match as well (the call stays unconfirmed)', async () => {
        const { sut } = setup();
        const staleDeny = { ...approvedOther, decision: 'deny' as const };
        await expect(sut.evaluate(restart('call-1', 'api'), ctx([staleDeny]))).resolves.toMatchObject({
          kind: 'pending_confirmation',
        });
      });

      it('matches a decision whose arguments were re-serialized in another key order', async () => {
        const { sut, tools } = setup();
        const call = { id: 'c1', name: 'restart_service', args: JSON.parse('{ "service" : "api" }') };
        const decision = approve(call, {
          fingerprint: fingerprint('restart_service', JSON.parse('{"service":"api"}')),
        });
        await expect(sut.evaluate(call, ctx([decision]))).resolves.toMatchObject({ kind: 'executed' });
        expect(tools.restart_service.executions).toBe(1);
      });
    });

    it.each([
      [
        'with a reason',
        'not during the release',
        'Tool execution was denied by the user. Reason: not during the release',
      ],
      ['without a reason', undefined, 'Tool execution was denied by the user.'],
    ])('refuses a denied call %s and tells the model the user denied it', async (_case, reason, content) => {
      const { sut, tools } = setup();
      const outcome = await sut.evaluate(restart(), ctx([deny(restart(), reason)]));
      expect(outcome).toMatchObject({ kind: 'denied', by: 'person', content });
      expect(tools.restart_service.executions).toBe(0);
    });

    it.each([
      ['expired', /expired/],
      ['no_route', /no approver/],
    ] as const)('refuses a call denied as %s with the matching story', async (decidedBy, content) => {
      const { sut, tools } = setup();
      const outcome = await sut.evaluate(
        restart(),
        ctx([approve(restart(), { decision: 'deny', decidedBy })]),
      );
      expect(outcome).toMatchObject({ kind: 'denied', by: decidedBy });
      expect(outcome.content).toMatch(content);
      expect(tools.restart_service.executions).toBe(0);
    });

    it('passes the approvers of a deny on to the outcome', async () => {
      const { sut } = setup();
      const outcome = await sut.evaluate(
        restart(),
        ctx([approve(restart(), { decision: 'deny', approvers: ['bob'] })]),
      );
      expect(outcome).toMatchObject({ kind: 'denied', approvers: ['bob'] });
    });

    it('does not run a call an approver responded to, and gives the model their words, naming them', async () => {
      const { sut, tools } = setup();
      const responded = approve(restart(), {
        decision: 'respond',
        approvers: ['carol'],
        response: 'Restart only the canary first.',
      });
      const outcome = await sut.evaluate(restart(), ctx([responded]));
      expect(outcome).toEqual({
        kind: 'responded',
        callId: restart().id,
        toolName: 'restart_service',
        approvers: ['carol'],
        response: 'Restart only the canary first.',
        content:
          'Tool "restart_service" was not run: the approver (carol) responded instead of approving. ' +
          "This is their response, not the tool's output: Restart only the canary first.",
      });
      expect(tools.restart_service.executions).toBe(0);
    });
  });

  describe('confirmation handler', () => {
    afterEach(() => jest.useRealTimers());

    it.each<[string, ConfirmationHandler, Partial<ToolCallOutcome>, number]>([
      [
        'approve runs the call',
        () => ({ decision: 'approve' }),
        { kind: 'executed', approvedBy: 'policy' },
        1,
      ],
      [
        'deny refuses it by policy',
        () => ({ decision: 'deny', reason: 'outside business hours' }),
        {
          kind: 'denied',
          by: 'policy',
          content: 'Tool execution was refused by policy: outside business hours',
        },
        0,
      ],
      ['ask leaves it to a person', () => ({ decision: 'ask' }), { kind: 'pending_confirmation' }, 0],
    ])('%s', async (_case, handler, expected, executions) => {
      const { sut, tools } = setup({ confirmationHandler: handler });
      await expect(sut.evaluate(restart(), ctx())).resolves.toMatchObject(expected);
      expect(tools.restart_service.executions).toBe(executions);
    });

    it('carries who decided (handler and rule) onto the outcome, for the audit', async () => {
      const decidedBy = { by: 'handler:staging-auto', rule: 'staging-restarts' };
      const approving = setup({ confirmationHandler: () => ({ decision: 'approve', decidedBy }) });
      await expect(approving.sut.evaluate(restart(), ctx())).resolves.toMatchObject({
        kind: 'executed',
        approvedBy: 'policy',
        policyDecision: decidedBy,
      });
      const denying = setup({ confirmationHandler: () => ({ decision: 'deny', reason: 'no', decidedBy }) });
      await expect(denying.sut.evaluate(restart(), ctx())).resolves.toMatchObject({
        kind: 'denied',
        by: 'policy',
        policyDecision: decidedBy,
      });
    });

    it('asks a person when the handler throws', async () => {
      const { sut, tools } = setup({
        confirmationHandler: () => {
          throw new Error('policy store down');
        },
      });
      const outcome = await sut.evaluate(restart(), ctx());
      expect(outcome).toMatchObject({
        kind: 'pending_confirmation',
        handlerFallback: expect.stringMatching(/policy store down/),
      });
      expect(tools.restart_service.executions).toBe(0);
    });

    it('asks a person when the handler exceeds its timeout', async () => {
      jest.useFakeTimers();
      let approveLate: () => void = () => undefined;
      const { sut, tools } = setup({
        confirmationTimeoutMs: 20,
        confirmationHandler: () =>
          new Promise((resolve) => (approveLate = () => resolve({ decision: 'approve' }))),
      });
      const evaluated = sut.evaluate(restart(), ctx());
      await jest.advanceTimersByTimeAsync(20);
      approveLate();
      await expect(evaluated).resolves.toMatchObject({
        kind: 'pending_confirmation',
        handlerFallback: expect.stringMatching(/timed out after 20 ms/),
      });
      expect(tools.restart_service.executions).toBe(0);
    });

    it('is not consulted when a person already decided the call', async () => {
      const handler = jest.fn(() => ({ decision: 'approve' as const }));
      const { sut, tools } = setup({ confirmationHandler: handler });
      await expect(sut.evaluate(restart(), ctx([deny(restart())]))).resolves.toMatchObject({
        kind: 'denied',
        by: 'person',
      });
      expect(handler).not.toHaveBeenCalled();
      expect(tools.restart_service.executions).toBe(0);
    });

    it('is not consulted for auto tools', async () => {
      const handler = jest.fn(() => ({ decision: 'deny' as const }));
      const { sut } = setup({ confirmationHandler: handler });
      await expect(
        sut.evaluate({ id: 'c', name: 'read_logs', args: { service: 'a' } }, ctx()),
      ).resolves.toMatchObject({
        kind: 'executed',
      });
      expect(handler).not.toHaveBeenCalled();
    });

    it('sees the call, its fingerprint and the caller scopes', async () => {
      const handler = jest.fn<ReturnType<ConfirmationHandler>, Parameters<ConfirmationHandler>>(() => ({
        decision: 'ask',
      }));
      const { sut } = setup({ confirmationHandler: handler });
      await sut.evaluate(restart(), ctx());
      expect(handler).toHaveBeenCalledWith(
        expect.objectContaining({
          callId: 'call-1',
          toolName: 'restart_service',
          args: { service: 'api' },
          fingerprint: fingerprint('restart_service', { service: 'api' }),
          scopes: ['admin'],
        }),
      );
      expect(handler.mock.calls[0][0]).not.toHaveProperty('decisions');
    });
  });

  describe('a turn of several calls', () => {
    /** A registry with one tool whose handlers wait until the test releases them; counts what is in flight. */
    function gatedTool() {
      let inFlight = 0;
      let peak = 0;
      let executions = 0;
      const releases: (() => void)[] = [];
      const definition = defineTool({
        name: 'slow',
        description: 'waits for the test',
        args: z.object({ n: z.number() }),
        handler: async ({ n }) => {
          executions++;
          inFlight++;
          peak = Math.max(peak, inFlight);
          await new Promise<void>((resolve) => releases.push(resolve));
          inFlight--;
          return `done ${n}`;
        },
      });
      const stats = () => ({ inFlight, peak, executions });
      /** Releases the waiting handlers newest first, so completion order differs from call order. */
      const drain = async (isDone: () => boolean) => {
        while (!isDone()) {
          releases.pop()?.();
          await new Promise((r) => setImmediate(r));
        }
      };
      return { definition, stats, drain };
    }
    const calls = (k: number) =>
      Array.from({ length: k }, (_, n) => ({ id: `c${n}`, name: 'slow', args: { n } }));

    it.each([
      ['the default of 4', undefined, 4],
      ['maxConcurrentTools 2', 2, 2],
      ['maxConcurrentTools 1', 1, 1],
    ])(
      'runs at most %s handlers at a time and keeps the call order',
      async (_case, maxConcurrentTools, bound) => {
        const tool = gatedTool();
        const sut = new ToolCallPipeline({
          registry: new ToolRegistry([tool.definition]),
          maxConcurrentTools,
        });
        expect(sut.maxConcurrentTools).toBe(bound);
        let done = false;
        const turn = sut.evaluateTurn(calls(10), ctx()).finally(() => (done = true));
        await new Promise((r) => setImmediate(r));
        expect(tool.stats().inFlight).toBe(bound);
        await tool.drain(() => done);
        const outcomes = await turn;
        expect(outcomes.map((o) => o.callId)).toEqual(calls(10).map((c) => c.id));
        expect(outcomes.map((o) => o.content)).toEqual(calls(10).map((c) => `done ${c.args.n}`));
        expect(tool.stats()).toEqual({ inFlight: 0, peak: bound, executions: 10 });
      },
    );

    it('returns mixed outcomes in call order', async () => {
      const { sut } = setup();
      const outcomes = await sut.evaluateTurn(
        [
          restart('c1'),
          { id: 'c2', name: 'read_logs', args: { service: 'api' } },
          { id: 'c3', name: 'nope', args: {} },
          { id: 'c4', name: 'drop_database', args: { service: 'api' } },
        ],
        ctx(),
      );
      expect(outcomes.map((o) => [o.callId, o.kind])).toEqual([
        ['c1', 'pending_confirmation'],
        ['c2', 'executed'],
        ['c3', 'error'],
        ['c4', 'manual_required'],
      ]);
    });

    describe('abort', () => {
      const logs = (id: string) => ({ id, name: 'read_logs', args: { service: 'api' } });
      const killSwitchOn = (abortingId: string, consulted: string[] = []): ToolPlugin => ({
        name: 'kill-switch',
        beforeTool: (c) => {
          consulted.push(c.callId);
          return c.callId === abortingId ? { action: 'abort', reason: 'stop' } : undefined;
        },
      });

      it.each([
        ['one at a time', 1],
        ['all at once', 4],
      ])(
        'runs none of the ready calls of a turn in which a callback aborts (%s)',
        async (_case, maxConcurrentTools) => {
          const { sut, tools } = setup({ maxConcurrentTools, plugins: [killSwitchOn('c3')] });
          const outcomes = await sut.evaluateTurn([logs('c1'), logs('c2'), logs('c3')], ctx());
          expect(tools.read_logs.executions).toBe(0);
          expect(outcomes.map((o) => o.kind)).toEqual(['aborted', 'aborted', 'aborted']);
          expect(outcomes[0]).toMatchObject({ plugin: 'kill-switch', reason: 'stop', callId: 'c1' });
        },
      );

      it('does not consult callbacks for calls after the abort', async () => {
        const consulted: string[] = [];
        const { sut } = setup({ maxConcurrentTools: 1, plugins: [killSwitchOn('c2', consulted)] });
        const outcomes = await sut.evaluateTurn([logs('c1'), logs('c2'), logs('c3')], ctx());
        expect(consulted).toEqual(['c1', 'c2']);
        expect(outcomes[2]).toMatchObject({ kind: 'aborted', callId: 'c3', plugin: 'kill-switch' });
      });

      it('asks no person and sends no manual step for an aborted turn, but keeps its refusals', async () => {
        const { sut, totalExecutions } = setup({
          plugins: [killSwitchOn('c4')],
          accessControl: new AccessControl()
            .defineRole('ops', { allow: ['tool:*'], deny: ['tool:read_logs'] })
            .assign(caller.userId, 'ops'),
        });
        const outcomes = await sut.evaluateTurn(
          [
            restart('c1'),
            { id: 'c2', name: 'drop_database', args: { service: 'api' } },
            logs('c3'),
            restart('c4'),
          ],
          ctx(),
        );
        expect(outcomes.map((o) => o.kind)).toEqual(['aborted', 'aborted', 'denied', 'aborted']);
        expect(totalExecutions()).toBe(0);
      });
    });

    describe('beforeExecute', () => {
      it('is awaited once, with the ready calls, after every call is authorized and before any runs', async () => {
        const { sut, tools, totalExecutions } = setup();
        const seen: { ready: string[]; executions: number }[] = [];
        const outcomes = await sut.evaluateTurn(
          [restart('c1'), { id: 'c2', name: 'read_logs', args: { service: 'a' } }, restart('c3')],
          ctx([approve(restart('c3'))]),
          {
            beforeExecute: async (ready) => {
              await new Promise((r) => setImmediate(r));
              seen.push({ ready: ready.map((c) => c.callId), executions: totalExecutions() });
            },
          },
        );
        expect(seen).toEqual([{ ready: ['c2', 'c3'], executions: 0 }]);
        expect(outcomes.map((o) => o.kind)).toEqual(['pending_confirmation', 'executed', 'executed']);
        expect(tools.read_logs.executions + tools.restart_service.executions).toBe(2);
      });

      it('fails the turn when it throws: nothing runs and the error reaches the caller', async () => {
        const { sut, totalExecutions } = setup();
        const lost = new Error('run taken over');
        const turn = sut.evaluateTurn(
          [
            { id: 'c1', name: 'read_logs', args: { service: 'a' } },
            { id: 'c2', name: 'read_logs', args: { service: 'b' } },
          ],
          ctx(),
          {
            beforeExecute: () => {
              throw lost;
            },
          },
        );
        await expect(turn).rejects.toBe(lost);
        expect(totalExecutions()).toBe(0);
      });

      it.each([
        ['only waits or refusals', [restart('c1'), { id: 'c2', name: 'nope', args: {} }], {}],
        ['a callback aborts', [{ id: 'c1', name: 'read_logs', args: { service: 'a' } }], { abort: true }],
        ['a call ID repeats', [restart('c1'), restart('c1')], {}],
      ])('is not called when no call may run (%s)', async (_case, calls, { abort }: { abort?: boolean }) => {
        const { sut } = setup({
          plugins: abort ? [{ name: 'stop', beforeTool: () => ({ action: 'abort', reason: 'no' }) }] : [],
        });
        let called = 0;
        await sut.evaluateTurn(calls, ctx(), { beforeExecute: () => void called++ });
        expect(called).toBe(0);
      });
    });
  });

  describe('preconditions', () => {
    function withPrecondition(check: (args: { service: string }) => unknown) {
      const tool = countingTool('restart_service', 'confirm');
      tool.definition.precondition = { check: check as (args: unknown) => unknown };
      const registry = new ToolRegistry([tool.definition]);
      return { sut: new ToolCallPipeline({ registry }), tool };
    }

    it('carries the value and its digest on a call that waits for a person, evaluated for its arguments', async () => {
      const { sut, tool } = withPrecondition((args) => ({ service: args.service, replicas: 6 }));
      const outcome = await sut.evaluate(restart('c1', 'payments'), ctx());
      expect(outcome).toMatchObject({
        kind: 'pending_confirmation',
        precondition: {
          value: { service: 'payments', replicas: 6 },
          digest: preconditionDigest({ service: 'payments', replicas: 6 }),
        },
      });
      expect(tool.executions).toBe(0);
    });

    it('neither runs nor asks about a call whose precondition cannot be evaluated, and tells the model why', async () => {
      const { sut, tool } = withPrecondition(() => {
        throw new Error('cluster unreachable');
      });
      const outcome = await sut.evaluate(restart(), ctx());
      expect(outcome.kind).toBe('error');
      expect(outcome.content).toMatch(/not run and not sent for approval: .*cluster unreachable/);
      expect(tool.executions).toBe(0);
    });

    it('does not evaluate it for a call that runs at once (approved)', async () => {
      const check = jest.fn(() => ({ replicas: 6 }));
      const { sut, tool } = withPrecondition(check);
      const outcome = await sut.evaluate(restart(), ctx([approve(restart())]));
      expect(outcome.kind).toBe('executed');
      expect(check).not.toHaveBeenCalled();
      expect(tool.executions).toBe(1);
    });
  });
});
