// The MCP server one client session talks to, as one principal: it lists the tools that principal may call and
// answers their calls through GatewayCalls. A confirm-tier call is held (with progress notifications) up to the hold
// limit; a client that asks for a task gets one instead, and the call waits for its decision inside the task.
import { Inject, Injectable } from '@nestjs/common';
import type { CreateTaskResult } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ExternalApprovalView } from '@countersign/contracts';
import type { Logger, Principal } from '@countersign/platform';
import { GatewayCalls } from '../calls/gateway-calls';
import { errorResult } from '../calls/call-results';
import type { GatewayConfig } from '../config/gateway-config.schema';
import { GATEWAY_SETTINGS, type GatewaySettings } from '../config/gateway-settings';
import { LOGGER } from '../core/gateway-tokens';
import { GatewayCatalog } from '../tools/gateway-catalog';
import { GatewayTaskStore } from './gateway-task-store';
import { PrincipalLimits } from './principal-limits';

export const GATEWAY_SERVER_INFO = { name: 'countersign-mcp-gateway', version: '0.1.0' };

interface GatewayServerDeps {
  catalog: GatewayCatalog;
  calls: GatewayCalls;
  config: Pick<GatewayConfig, 'hold' | 'tasks'>;
  logger: Logger;
  /**
   * Counts each tool call against the caller's rate limit here, where no HTTP endpoint does (stdio): a refused call is
   * a JSON-RPC error (code -32000, as the HTTP endpoint's refusals) whose data says when to retry.
   */
  callLimits?: Pick<PrincipalLimits, 'check'>;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Makes the MCP server of each client session, for the transport that serves it. */
@Injectable()
export class GatewayServer {
  private readonly deps: GatewayServerDeps;

  constructor(
    catalog: GatewayCatalog,
    calls: GatewayCalls,
    private readonly limits: PrincipalLimits,
    @Inject(GATEWAY_SETTINGS) { config }: GatewaySettings,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.deps = { catalog, calls, config, logger };
  }

  /**
   * A new MCP server for one session of `caller`. Closing it stops the session's tasks. `countToolCalls`: count each
   * tool call against the caller's rate limit here, for a transport that does not (stdio).
   */
  forSession(caller: Principal, options: { countToolCalls: boolean }): Server {
    return gatewayServer(
      caller,
      options.countToolCalls ? { ...this.deps, callLimits: this.limits } : this.deps,
    );
  }
}

function gatewayServer(caller: Principal, deps: GatewayServerDeps): Server {
  const { catalog, config } = deps;
  const tasks = config.tasks.enabled
    ? new GatewayTaskStore({
        maxUnfinished: config.tasks.maxPerSession,
        maxTtlMs: config.tasks.maxTtlMs,
        defaultTtlMs: config.tasks.defaultTtlMs,
      })
    : undefined;
  const server = new Server(GATEWAY_SERVER_INFO, {
    capabilities: {
      tools: { listChanged: true },
      ...(tasks ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
    },
    taskStore: tasks,
  });
  server.onclose = () => tasks?.close();
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalog.listFor(caller.id) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const refused = await deps.callLimits?.check(caller.id, 'tool-call');
    if (refused)
      throw new McpError(-32000, refused.message, { retryAfterSeconds: refused.retryAfterSeconds });
    const client = clientName(server);
    if (request.params.task && tasks) return startTask(caller, request.params, extra, tasks, client, deps);
    return deps.calls.call(caller, request.params, {
      signal: extra.signal,
      progress: progressSender(request.params, extra),
      waitUntil: Date.now() + config.hold.maxMs,
      onWaiting: holdProgress(request.params, extra, config.hold.maxMs),
      pollEveryMs: config.hold.progressEveryMs,
      client,
    });
  });
  return server;
}

/**
 * The call as a task: answered at once with the task, then decided and (once approved) run in the background while the
 * task lives. Its result is the task's result; a cancelled or expired task's call never runs.
 */
async function startTask(
  caller: Principal,
  params: CallToolRequest['params'],
  extra: Extra,
  tasks: GatewayTaskStore,
  client: string | undefined,
  deps: GatewayServerDeps,
): Promise<CreateTaskResult> {
  const taskStore = extra.taskStore!;
  const task = await taskStore.createTask({ ttl: params.task?.ttl });
  const signal = tasks.signalOf(task.taskId)!;
  const where = { taskId: task.taskId, tool: params.name, requester: caller.id };
  let told = '';
  void (async () => {
    let result: CallToolResult;
    try {
      result = await deps.calls.call(caller, params, {
        signal,
        waitUntil: Date.parse(task.createdAt) + (task.ttl ?? deps.config.tasks.defaultTtlMs),
        pollEveryMs: 25_000,
        client,
        onWaiting: (view) => {
          const message = waitingMessage(view);
          if (message === told) return;
          told = message;
          void taskStore.updateTaskStatus(task.taskId, 'working', message).catch(() => undefined);
        },
      });
    } catch (error) {
      result = errorResult(`The call failed: ${(error as Error).message}. It may not have run.`);
    }
    if (signal.aborted) return; // cancelled, expired or the session ended: nobody may read a result any more
    await taskStore
      .storeTaskResult(task.taskId, 'completed', result)
      .catch((error: Error) => deps.logger.warn({ ...where, err: error.message }, 'task result not stored'));
  })();
  deps.logger.info(where, 'call taken as a task');
  return { task };
}

function waitingMessage(view: ExternalApprovalView): string {
  return `Waiting for approval ${view.approvalId} (decide it at ${view.inboxUrl}); it expires at ${view.expiresAt}.`;
}

/** Sends the client's progress token back with each progress notification, when it sent one. */
function progressSender(params: CallToolRequest['params'], extra: Extra) {
  const progressToken = params._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  return (progress: { progress: number; total?: number; message?: string }) =>
    void extra
      .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } })
      .catch(() => undefined);
}

/** While a call is held: progress in milliseconds waited (it must grow), out of the hold limit, and what it waits for. */
function holdProgress(params: CallToolRequest['params'], extra: Extra, holdMs: number) {
  const send = progressSender(params, extra);
  if (!send) return undefined;
  let last = -1;
  return (view: ExternalApprovalView, waitedMs: number) => {
    const progress = Math.max(Math.round(waitedMs), last + 1);
    last = progress;
    send({ progress, total: holdMs, message: waitingMessage(view) });
  };
}

function clientName(server: Server): string | undefined {
  const info = server.getClientVersion();
  return info ? `${info.name} ${info.version}` : undefined;
}
