// Before-callbacks that deny a call or send it to people (admission hooks answer these, see libs/admission).
import { caller, countingTool } from './__fixtures__/counting-tools';
import type { ConfirmationHandler } from './confirmation-handler';
import { type CallDecision, DecisionBook } from './decisions';
import { fingerprint } from './fingerprint';
import type { ToolPlugin } from './plugins';
import { type PipelineOptions, ToolCallPipeline } from './tool-call-pipeline';
import { ToolRegistry } from './tool-registry';

function setup(options: Partial<PipelineOptions> = {}) {
  const tools = {
    read_logs: countingTool('read_logs', 'auto'),
    drop_database: countingTool('drop_database', 'manual_only'),
  };
  const registry = new ToolRegistry(Object.values(tools).map((t) => t.definition));
  return { sut: new ToolCallPipeline({ registry, ...options }), tools };
}

const ctx = (decisions: CallDecision[] = []) => ({ ...caller, decisions: new DecisionBook(decisions) });
const logs = { id: 'c1', name: 'read_logs', args: { service: 'api' } };

describe('before-tool callbacks: deny and confirm', () => {
  it('refuses the call with the reason of a deny and does not execute', async () => {
    const { sut, tools } = setup({
      plugins: [
        { name: 'hook', beforeTool: () => ({ action: 'deny', reason: 'outside the change window' }) },
      ],
    });
    const outcome = await sut.evaluate(logs, ctx());
    expect(outcome).toMatchObject({ kind: 'denied', by: 'guard' });
    expect(outcome.content).toMatch(/guard "hook" denied it: outside the change window/);
    expect(tools.read_logs.executions).toBe(0);
  });

  it('sends an auto call to people when a callback asks for confirmation, naming its groups and quorum', async () => {
    const approveAll: ConfirmationHandler = () => ({ decision: 'approve' });
    const { sut, tools } = setup({
      confirmationHandler: approveAll,
      plugins: [{ name: 'hook', beforeTool: () => ({ action: 'confirm', groups: ['finance'], quorum: 2 }) }],
    });
    const outcome = await sut.evaluate(logs, ctx());
    expect(outcome).toMatchObject({
      kind: 'pending_confirmation',
      tier: 'confirm',
      route: { by: 'hook', groups: ['finance'], quorum: 2 },
    });
    expect(tools.read_logs.executions).toBe(0);
    // Once a person approved it, it runs.
    const approved = { callId: 'c1', decision: 'approve' as const, decidedBy: 'person' as const };
    const print = fingerprint('read_logs', { service: 'api' });
    await expect(sut.evaluate(logs, ctx([{ ...approved, fingerprint: print }]))).resolves.toMatchObject({
      kind: 'executed',
      approvedBy: 'person',
    });
  });

  it('keeps a manual-only call manual when a callback asks for confirmation, and a later deny still wins', async () => {
    const confirm: ToolPlugin = { name: 'c', beforeTool: () => ({ action: 'confirm' }) };
    const { sut } = setup({ plugins: [confirm] });
    const drop = { id: 'd1', name: 'drop_database', args: { service: 'api' } };
    await expect(sut.evaluate(drop, ctx())).resolves.toMatchObject({ kind: 'manual_required' });
    const denying = setup({
      plugins: [confirm, { name: 'd', beforeTool: () => ({ action: 'deny', reason: 'no' }) }],
    });
    await expect(denying.sut.evaluate(logs, ctx())).resolves.toMatchObject({ kind: 'denied', by: 'guard' });
  });
});
