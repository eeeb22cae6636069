import { GatewayTaskStore } from './gateway-task-store';

const request = { method: 'tools/call', params: {} };
const store = (maxUnfinished = 2) =>
  new GatewayTaskStore({ maxUnfinished, maxTtlMs: 10_000, defaultTtlMs: 5_000 });

describe('GatewayTaskStore', () => {
  afterEach(() => jest.useRealTimers());

  it('aborts a task’s signal when the client cancels it, so its call never starts', async () => {
    const sut = store();
    const task = await sut.createTask({}, 1, request);
    const signal = sut.signalOf(task.taskId)!;
    expect(signal.aborted).toBe(false);
    await sut.updateTaskStatus(task.taskId, 'cancelled', 'Client cancelled task execution.');
    expect(signal.aborted).toBe(true);
    await expect(sut.storeTaskResult(task.taskId, 'completed', { content: [] })).rejects.toThrow(/cancelled/);
  });

  it('aborts and forgets a task when its TTL passes (the requested one, cut to the maximum)', async () => {
    jest.useFakeTimers();
    const sut = store();
    const task = await sut.createTask({ ttl: 60_000 }, 1, request);
    expect(task.ttl).toBe(10_000);
    const signal = sut.signalOf(task.taskId)!;
    jest.advanceTimersByTime(9_999);
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(await sut.getTask(task.taskId)).toBeNull();
  });

  it('keeps a finished task’s result for its TTL from when it finished', async () => {
    jest.useFakeTimers();
    const sut = store();
    const task = await sut.createTask({}, 1, request);
    jest.advanceTimersByTime(4_000);
    await sut.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: 'done' }] });
    jest.advanceTimersByTime(4_000);
    expect(await sut.getTaskResult(task.taskId)).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect((await sut.getTask(task.taskId))?.status).toBe('completed');
  });

  it('refuses more unfinished tasks than a session may have', async () => {
    const sut = store(2);
    await sut.createTask({}, 1, request);
    const second = await sut.createTask({}, 2, request);
    await expect(sut.createTask({}, 3, request)).rejects.toThrow(/2 unfinished tasks/);
    await sut.storeTaskResult(second.taskId, 'completed', { content: [] });
    await expect(sut.createTask({}, 4, request)).resolves.toMatchObject({ status: 'working' });
  });

  it('stops every task when its session ends', async () => {
    const sut = store();
    const a = await sut.createTask({}, 1, request);
    const b = await sut.createTask({}, 2, request);
    const signals = [sut.signalOf(a.taskId)!, sut.signalOf(b.taskId)!];
    sut.close();
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    expect(await sut.listTasks()).toEqual({ tasks: [], nextCursor: undefined });
  });
});
