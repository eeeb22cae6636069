// A turn's outcomes as they come (evaluateTurn's onOutcome): each call is told when its outcome is known, not when the
// turn's slowest call ends, within maxConcurrentTools. Handlers wait for the test's release, never for the clock.
import { z } from 'zod';
import { caller } from './__fixtures__/counting-tools';
import { defineTool } from './tool';
import { ToolCallPipeline } from './tool-call-pipeline';
import { ToolRegistry } from './tool-registry';

/** A tool whose handlers wait until the test releases them by name. */
function latchedTool() {
  const waiting = new Map<string, () => void>();
  let inFlight = 0;
  let peak = 0;
  const definition = defineTool({
    name: 'work',
    description: 'waits for the test',
    args: z.object({ name: z.string() }),
    handler: async ({ name }) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise<void>((resolve) => waiting.set(name, resolve));
      inFlight--;
      return `done ${name}`;
    },
  });
  const release = (name: string) => {
    waiting.get(name)!();
    waiting.delete(name);
  };
  return { definition, release, started: () => [...waiting.keys()], stats: () => ({ inFlight, peak }) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const work = (name: string) => ({ id: `c-${name}`, name: 'work', args: { name } });

describe('ToolCallPipeline.evaluateTurn, outcomes as they come', () => {
  it('tells a refusal at once and a finished call before a slower one ends, two at a time', async () => {
    const tool = latchedTool();
    const sut = new ToolCallPipeline({
      registry: new ToolRegistry([tool.definition]),
      maxConcurrentTools: 2,
    });
    const told: string[] = [];
    let done = false;
    const turn = sut
      .evaluateTurn(
        [work('slow'), work('fast'), work('third'), { id: 'c-x', name: 'nope', args: {} }],
        { ...caller },
        { onOutcome: (outcome, index) => void told.push(`${index}:${outcome.callId}:${outcome.kind}`) },
      )
      .finally(() => (done = true));
    await settle();
    expect(tool.started()).toEqual(['slow', 'fast']);
    expect(told).toEqual(['3:c-x:error']);

    tool.release('fast');
    await settle();
    expect(told).toEqual(['3:c-x:error', '1:c-fast:executed']);
    expect(tool.started()).toEqual(['slow', 'third']);
    tool.release('third');
    await settle();
    expect(told).toEqual(['3:c-x:error', '1:c-fast:executed', '2:c-third:executed']);
    expect(done).toBe(false);

    tool.release('slow');
    const outcomes = await turn;
    expect(told.at(-1)).toBe('0:c-slow:executed');
    expect(outcomes.map((o) => o.callId)).toEqual(['c-slow', 'c-fast', 'c-third', 'c-x']);
    expect(tool.stats()).toEqual({ inFlight: 0, peak: 2 });
  });

  it("frees a call's slot when the call ends, not when its telling does", async () => {
    const tool = latchedTool();
    const sut = new ToolCallPipeline({
      registry: new ToolRegistry([tool.definition]),
      maxConcurrentTools: 1,
    });
    const tellings = new Map<string, () => void>();
    const turn = sut.evaluateTurn(
      [work('a'), work('b')],
      { ...caller },
      {
        onOutcome: (outcome) => new Promise<void>((resolve) => tellings.set(outcome.callId, resolve)),
      },
    );
    await settle();
    tool.release('a');
    await settle();
    // a's telling (the worker's audit entry) is still under way, and b already runs.
    expect([...tellings.keys()]).toEqual(['c-a']);
    expect(tool.started()).toEqual(['b']);
    tool.release('b');
    await settle();
    let done = false;
    void turn.finally(() => (done = true));
    await settle();
    expect(done).toBe(false); // the turn waits for every telling
    tellings.get('c-a')!();
    tellings.get('c-b')!();
    expect((await turn).map((o) => o.kind)).toEqual(['executed', 'executed']);
  });

  it('starts no call once a telling failed, and rejects with its error', async () => {
    const tool = latchedTool();
    const sut = new ToolCallPipeline({
      registry: new ToolRegistry([tool.definition]),
      maxConcurrentTools: 1,
    });
    const tellings = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
    const told: string[] = [];
    const turn = sut.evaluateTurn(
      [work('a'), work('b'), work('c')],
      { ...caller },
      {
        onOutcome: (outcome) => {
          told.push(outcome.callId);
          return new Promise<void>((resolve, reject) => tellings.set(outcome.callId, { resolve, reject }));
        },
      },
    );
    const rejected = expect(turn).rejects.toThrow('audit log unreachable');
    await settle();
    tool.release('a');
    await settle();
    expect(tool.started()).toEqual(['b']);
    tellings.get('c-a')!.reject(new Error('audit log unreachable'));
    await settle();
    tool.release('b'); // b was running: it finishes and is told
    await settle();
    tellings.get('c-b')?.resolve();
    await rejected;
    expect(told).toEqual(['c-a', 'c-b']);
    expect(tool.started()).toEqual([]); // c never started
    expect(tool.stats().peak).toBe(1);
  });

  it('tells every call of a turn that repeats a call ID, and runs none', async () => {
    const tool = latchedTool();
    const sut = new ToolCallPipeline({ registry: new ToolRegistry([tool.definition]) });
    const told: number[] = [];
    const outcomes = await sut.evaluateTurn(
      [work('a'), work('a')],
      { ...caller },
      {
        onOutcome: (_outcome, index) => void told.push(index),
      },
    );
    expect(told.sort()).toEqual([0, 1]);
    expect(outcomes.map((o) => o.kind)).toEqual(['error', 'error']);
    expect(tool.stats().peak).toBe(0);
  });
});
