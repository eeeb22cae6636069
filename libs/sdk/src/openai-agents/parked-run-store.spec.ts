import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileParkedRunStore, MemoryParkedRunStore, type ParkedRun } from './parked-run-store';

const parked = (runId: string): ParkedRun => ({
  version: 1,
  runId,
  agent: 'support',
  state: '{"$schemaVersion":"1.22"}',
  approvals: [{ callId: 'c1', toolName: 'refund_order', approvalId: 'xa-1', fingerprint: 'a'.repeat(64) }],
  parkedAt: '2026-11-30T12:00:00.000Z',
});

describe('FileParkedRunStore', () => {
  it('saves, loads and deletes a run', async () => {
    const sut = new FileParkedRunStore(mkdtempSync(join(tmpdir(), 'parked-')));
    await sut.save(parked('ticket-1'));
    expect(await sut.load('ticket-1')).toEqual(parked('ticket-1'));
    await sut.delete('ticket-1');
    expect(await sut.load('ticket-1')).toBeUndefined();
  });

  it('keeps every run ID inside its folder, whatever it holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parked-'));
    const sut = new FileParkedRunStore(join(dir, 'runs'));
    for (const runId of ['..', '../escape', 'a/b', '.hidden']) await sut.save(parked(runId));
    expect(readdirSync(dir)).toEqual(['runs']);
    expect(readdirSync(join(dir, 'runs'))).toHaveLength(4);
    expect((await sut.load('../escape'))?.runId).toBe('../escape');
  });

  it('refuses a stored run that is not one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parked-'));
    writeFileSync(join(dir, 'run-broken.json'), JSON.stringify({ version: 1, runId: 'broken' }));
    await expect(new FileParkedRunStore(dir).load('broken')).rejects.toThrow();
  });
});

describe('MemoryParkedRunStore', () => {
  it('gives back a copy, not the object saved', async () => {
    const sut = new MemoryParkedRunStore();
    const run = parked('ticket-2');
    await sut.save(run);
    run.state = 'changed';
    expect((await sut.load('ticket-2'))?.state).toBe('{"$schemaVersion":"1.22"}');
  });
});
