// Run events as the run's history stores them (and pub/sub carries them): StoredRunEventSchema's short tuples.
import { fingerprint } from '@countersign/authorization';
import type { z } from 'zod';
import { RUN_STATUS_CODES, RunEventName, type RunEvent, StoredRunEventSchema } from '@countersign/contracts';

/** An event with its number in the run's history (the SSE `id:`). */
export interface NumberedRunEvent {
  seq: number;
  event: RunEvent;
}

/** How many events a run's history keeps; older ones are dropped (a run of 20 turns of 10 calls needs ~450). */
export const RUN_EVENT_HISTORY = 500;

export function encodeRunEvent(event: RunEvent): string {
  return JSON.stringify(toStored(event));
}

/**
 * What a script that adds events to a run's history needs (lua/includes/append-events.lua), as fields of its JSON
 * argument: the channel, the run ID as JSON, the bound, the encoded events.
 */
export type HistoryArgs = { eventsChannel: string; runIdJson: string; keepEvents: number; events: string[] };

export function historyArgs(eventsChannel: string, runId: string, events: readonly RunEvent[]): HistoryArgs {
  return {
    eventsChannel,
    runIdJson: JSON.stringify(runId),
    keepEvents: RUN_EVENT_HISTORY,
    events: events.map(encodeRunEvent),
  };
}

/** The tuple as stored; the schema reads status letters back as statuses, so its input type is spelled here. */
function toStored(event: RunEvent): z.input<typeof StoredRunEventSchema> {
  switch (event.type) {
    case RunEventName.Status:
      return ['s', RUN_STATUS_CODES[event.status]];
    case RunEventName.ToolConfirmation: {
      const { callId, toolName, args, tier } = event.call;
      return ['c', callId, toolName, args, tier];
    }
    case RunEventName.ToolResult:
      return ['r', event.callId, event.toolName, event.outcome, event.content];
    case RunEventName.Text:
      return ['t', event.text];
    case RunEventName.Done: {
      const status = RUN_STATUS_CODES[event.status];
      return event.result === undefined ? ['d', status] : ['d', status, event.result];
    }
    case RunEventName.Node:
      return event.callId ? ['n', event.node, event.status, event.callId] : ['n', event.node, event.status];
    case RunEventName.Decision:
      return [
        'v',
        event.callId,
        event.toolName,
        event.decision,
        event.decidedBy,
        event.approvers,
        (event.decision === 'respond' ? event.response : event.reason) ?? '',
        event.rule ?? '',
      ];
  }
}

/** The event, or undefined when `stored` is not one (parsed JSON or its text). */
export function decodeRunEvent(runId: string, stored: unknown): RunEvent | undefined {
  const parsed = StoredRunEventSchema.safeParse(typeof stored === 'string' ? safeJson(stored) : stored);
  if (!parsed.success) return undefined;
  const e = parsed.data;
  switch (e[0]) {
    case 's':
      return { type: RunEventName.Status, runId, status: e[1] };
    case 'c':
      return {
        type: RunEventName.ToolConfirmation,
        runId,
        call: { callId: e[1], toolName: e[2], args: e[3], tier: e[4], fingerprint: fingerprint(e[2], e[3]) },
      };
    case 'r':
      return {
        type: RunEventName.ToolResult,
        runId,
        callId: e[1],
        toolName: e[2],
        outcome: e[3],
        content: e[4],
      };
    case 't':
      return { type: RunEventName.Text, runId, text: e[1] };
    case 'd':
      return { type: RunEventName.Done, runId, status: e[1], ...(e.length === 3 ? { result: e[2] } : {}) };
    case 'n':
      return {
        type: RunEventName.Node,
        runId,
        node: e[1],
        status: e[2],
        ...(e.length === 4 ? { callId: e[3] } : {}),
      };
    case 'v':
      return {
        type: RunEventName.Decision,
        runId,
        callId: e[1],
        toolName: e[2],
        decision: e[3],
        decidedBy: e[4],
        approvers: e[5],
        ...(e[6] ? { [e[3] === 'respond' ? 'response' : 'reason']: e[6] } : {}),
        ...(e[7] ? { rule: e[7] } : {}),
      };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
