// MCP tasks of one client session (the SDK's experimental TaskStore, which serves tasks/get, tasks/result, tasks/list
// and tasks/cancel). Each task has a signal that aborts when it is cancelled, expires or its session ends: a task is
// what keeps a waiting call alive, so a call whose task is gone never runs. Tasks live with their session, in this
// process (a session does too); what must outlive both, the call's approval and outcome, is in Redis.
import { randomBytes } from 'node:crypto';
import type {
  CreateTaskOptions,
  TaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import {
  ErrorCode,
  McpError,
  type Request,
  type RequestId,
  type Result,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';

interface StoredTask {
  task: Task;
  result?: Result;
  controller: AbortController;
  timer?: NodeJS.Timeout;
}

const TERMINAL: ReadonlySet<Task['status']> = new Set(['completed', 'failed', 'cancelled']);
const PAGE_SIZE = 50;

export class GatewayTaskStore implements TaskStore {
  private readonly tasks = new Map<string, StoredTask>();

  constructor(private readonly options: { maxUnfinished: number; maxTtlMs: number; defaultTtlMs: number }) {}

  /** Aborts when the task is cancelled, expires or the session ends; undefined for an unknown task. */
  signalOf(taskId: string): AbortSignal | undefined {
    return this.tasks.get(taskId)?.controller.signal;
  }

  async createTask(params: CreateTaskOptions, _requestId: RequestId, _request: Request): Promise<Task> {
    const unfinished = [...this.tasks.values()].filter((t) => !TERMINAL.has(t.task.status)).length;
    if (unfinished >= this.options.maxUnfinished)
      throw new McpError(
        ErrorCode.InvalidRequest,
        `this session has ${unfinished} unfinished tasks, the most it may have; wait for some to finish`,
      );
    const ttl = Math.min(params.ttl ?? this.options.defaultTtlMs, this.options.maxTtlMs);
    const now = new Date().toISOString();
    const task: Task = {
      taskId: randomBytes(16).toString('hex'),
      status: 'working',
      ttl,
      createdAt: now,
      lastUpdatedAt: now,
      pollInterval: params.pollInterval ?? 1_000,
    };
    const stored: StoredTask = { task, controller: new AbortController() };
    this.tasks.set(task.taskId, stored);
    this.expireAfter(stored, ttl);
    return { ...task };
  }

  async getTask(taskId: string): Promise<Task | null> {
    const stored = this.tasks.get(taskId);
    return stored ? { ...stored.task } : null;
  }

  async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result): Promise<void> {
    const stored = this.found(taskId);
    if (TERMINAL.has(stored.task.status))
      throw new Error(`task ${taskId} is ${stored.task.status}: its result is already final`);
    stored.result = result;
    this.moveTo(stored, status);
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const stored = this.found(taskId);
    if (!stored.result) throw new Error(`task ${taskId} has no result yet`);
    return stored.result;
  }

  async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string): Promise<void> {
    const stored = this.found(taskId);
    if (TERMINAL.has(stored.task.status))
      throw new Error(`task ${taskId} is ${stored.task.status}: it cannot become ${status}`);
    if (statusMessage !== undefined) stored.task.statusMessage = statusMessage;
    this.moveTo(stored, status);
    // A cancelled task's call must not run: whatever waits for it stops now.
    if (status === 'cancelled') stored.controller.abort(new Error('the task was cancelled'));
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const ids = [...this.tasks.keys()];
    const start = cursor === undefined ? 0 : ids.indexOf(cursor) + 1;
    if (cursor !== undefined && start === 0) throw new Error(`invalid cursor: ${cursor}`);
    const page = ids.slice(start, start + PAGE_SIZE);
    return {
      tasks: page.map((id) => ({ ...this.tasks.get(id)!.task })),
      nextCursor: start + PAGE_SIZE < ids.length ? page.at(-1) : undefined,
    };
  }

  /** The session ended: every task stops, and is forgotten. */
  close(): void {
    for (const stored of this.tasks.values()) {
      clearTimeout(stored.timer);
      stored.controller.abort(new Error('the session ended'));
    }
    this.tasks.clear();
  }

  private found(taskId: string): StoredTask {
    const stored = this.tasks.get(taskId);
    if (!stored) throw new Error(`task ${taskId} not found`);
    return stored;
  }

  private moveTo(stored: StoredTask, status: Task['status']): void {
    stored.task.status = status;
    stored.task.lastUpdatedAt = new Date().toISOString();
    // A finished task is kept for its TTL from now, for the client to read its result.
    if (TERMINAL.has(status) && stored.task.ttl) this.expireAfter(stored, stored.task.ttl);
  }

  private expireAfter(stored: StoredTask, ttlMs: number): void {
    clearTimeout(stored.timer);
    stored.timer = setTimeout(() => {
      stored.controller.abort(new Error('the task expired'));
      this.tasks.delete(stored.task.taskId);
    }, ttlMs);
    stored.timer.unref();
  }
}
