// Preloaded (`-r`) into agent-worker child processes by `npm run bench` only, never by the services themselves.
// Reports over the IPC channel the moment each tool handler is entered and each run finishes, so the bench
// can time "decision sent → tool runs" without touching the worker's code or adding Redis traffic.
import { performance } from 'node:perf_hooks';
import { ToolCallPipeline } from '@countersign/authorization';
import { RunStore } from '../../apps/agent-worker/src/runs/run-store';

export type ProbeEvent =
  | { t: 'exec'; runId: string; callId: string; tool: string; at: number }
  | { t: 'done'; runId: string; status: string; at: number };

/** Wall-clock milliseconds with sub-millisecond resolution (comparable across processes of one machine). */
const wallNow = () => performance.timeOrigin + performance.now();

/**
 * The bench turns the per-call reports off where it reads none (the auto-tier phases time whole runs): each tick with
 * a call would cost the worker an IPC write, which calling the handler directly does not.
 */
let reportCalls = true;
process.on('message', (message: { probeCalls?: boolean }) => {
  if (typeof message?.probeCalls === 'boolean') reportCalls = message.probeCalls;
});
// Listening must not keep a worker alive that is shutting down.
process.channel?.unref();

let buffer: ProbeEvent[] = [];
function report(event: ProbeEvent): void {
  if (!process.send) return;
  if (buffer.length === 0) setImmediate(flush);
  buffer.push(event);
}
function flush(): void {
  const events = buffer;
  buffer = [];
  process.send?.({ probe: events });
}

const execute = ToolCallPipeline.prototype.execute;
ToolCallPipeline.prototype.execute = function (readyCall, ctx) {
  if (reportCalls)
    report({
      t: 'exec',
      runId: ctx.runId,
      callId: readyCall.callId,
      tool: readyCall.toolName,
      at: wallNow(),
    });
  return execute.call(this, readyCall, ctx);
};

const finishRun = RunStore.prototype.finishRun;
RunStore.prototype.finishRun = async function (runId, lease, end) {
  const finished = await finishRun.call(this, runId, lease, end);
  if (finished) report({ t: 'done', runId, status: end.status, at: wallNow() });
  return finished;
};
