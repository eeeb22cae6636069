import { previewCall } from './call-preview';

const ctx = { runId: 'run-1', agent: 'ops', userId: 'alice', scopes: [], callId: 'call-1' };

describe('previewCall', () => {
  afterEach(() => jest.useRealTimers());

  it('gives the tool’s preview on one line, cut to the bound', async () => {
    const tool = { preview: (args: unknown) => `payments:\n 3 → ${(args as { n: number }).n}   replicas` };
    expect(await previewCall(tool, { n: 6 }, ctx, { maxChars: 100 })).toBe('payments: 3 → 6 replicas');
    expect(await previewCall(tool, { n: 6 }, ctx, { maxChars: 10 })).toBe('payments:…');
  });

  it.each([
    ['has no preview', {}],
    [
      'throws',
      {
        preview: () => {
          throw new Error('down');
        },
      },
    ],
    ['rejects', { preview: () => Promise.reject(new Error('down')) }],
    ['answers nothing', { preview: () => undefined }],
    ['answers blank text', { preview: () => '  \n ' }],
    ['answers something else than text', { preview: () => 42 as unknown as string }],
  ])('shows no preview when the tool %s', async (_what, tool) => {
    expect(await previewCall(tool, {}, ctx, { maxChars: 100 })).toBeUndefined();
  });

  it('shows no preview when the tool does not answer in time, and does not wait longer', async () => {
    jest.useFakeTimers();
    const never = { preview: () => new Promise<string>(() => undefined) };
    const pending = previewCall(never, {}, ctx, { timeoutMs: 500, maxChars: 100 });
    await jest.advanceTimersByTimeAsync(499);
    let settled = false;
    void pending.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(await pending).toBeUndefined();
  });
});
