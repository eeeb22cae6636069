// Runs: the agent worker's HTTP bodies, its `agent-runs` job and its server-sent events.
import { z } from 'zod';
import { IdSchema, Sha256HexSchema, TierSchema, ToolArgsSchema, ToolNameSchema } from './common.schema';
import { RequestPreconditionSchema } from './approval-request.schema';
import { DecidedBySchema, DecisionValueSchema } from './decision.schema';
import { NodeStatusSchema, RunbookViewSchema } from './runbook.schema';

export const ScriptedToolCallSchema = z.object({
  id: IdSchema.optional(),
  name: ToolNameSchema,
  args: ToolArgsSchema.default({}),
});

/** One turn of a scripted model: either tool calls (with the text the model writes before them, if any) or a final text. */
export const ScriptTurnSchema = z.union([
  z
    .object({
      text: z.string().max(100_000).optional(),
      toolCalls: z.array(ScriptedToolCallSchema).min(1).max(64),
    })
    .strict(),
  z.object({ text: z.string().max(100_000) }).strict(),
]);
export type ScriptTurn = z.infer<typeof ScriptTurnSchema>;

/** `POST /runs`. The requester is the authenticated caller, never a field of the body. */
export const StartRunBodySchema = z.object({
  agent: IdSchema,
  input: z.string().min(1).max(100_000),
  sessionId: IdSchema.optional(),
  script: z.array(ScriptTurnSchema).max(200).optional(),
  /** A machine client starting the run for a user (it needs an `actAs` entry for that user in PRINCIPALS_CONFIG). */
  onBehalfOf: IdSchema.optional(),
  /** Refused by name, so an old client learns why instead of silently starting a run in its own name. */
  userId: z
    .undefined({
      error:
        'is not accepted: the requester is the authenticated caller (Authorization header); a machine client ' +
        'starting a run for a user sends onBehalfOf',
    })
    .optional(),
});
export type StartRunBody = z.infer<typeof StartRunBodySchema>;

export const StartRunResponseSchema = z.object({ runId: IdSchema });

/** A run started through the `agent-runs` queue: what the caller asked for, and who the run belongs to. */
export const StartRunJobSchema = StartRunBodySchema.omit({ onBehalfOf: true, userId: true }).extend({
  runId: IdSchema,
  /** The requester: the authenticated caller, or the user a machine client acts for. */
  userId: IdSchema,
  /** The machine client that started the run for `userId`; absent when the requester started it. */
  submittedBy: IdSchema.optional(),
  scopes: z.array(z.string().max(64)).max(32).default([]),
});
export type StartRunJob = z.infer<typeof StartRunJobSchema>;

export const RunStatusSchema = z.enum(['queued', 'running', 'awaiting_confirmation', 'completed', 'failed']);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const PendingCallSchema = z.object({
  callId: IdSchema,
  /** The request the call waits for (GET /runs/:runId says it; the event history leaves it out to stay small). */
  requestId: IdSchema.optional(),
  toolName: ToolNameSchema,
  args: ToolArgsSchema,
  tier: TierSchema,
  fingerprint: Sha256HexSchema,
  /**
   * The tool's precondition as the request shows it, when it declares one (GET /runs/:runId says it; the event history
   * leaves it out): a decision for the request carries its digest.
   */
  precondition: RequestPreconditionSchema.optional(),
});
export type PendingCall = z.infer<typeof PendingCallSchema>;

/** A chat message as the model sees it (OpenAI-compatible shape). */
export const ChatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    toolCalls: z.array(z.object({ id: IdSchema, name: ToolNameSchema, args: ToolArgsSchema })).optional(),
  }),
  z.object({ role: z.literal('tool'), toolCallId: IdSchema, name: ToolNameSchema, content: z.string() }),
]);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const RunViewSchema = z.object({
  runId: IdSchema,
  agent: IdSchema,
  userId: IdSchema,
  submittedBy: IdSchema.optional(),
  status: RunStatusSchema,
  pending: z.array(PendingCallSchema),
  messages: z.array(ChatMessageSchema),
  result: z.string().optional(),
  error: z.string().optional(),
  /** Runbook runs only: the graph position and each node's state, read from the run's history. */
  runbook: RunbookViewSchema.optional(),
});
export type RunView = z.infer<typeof RunViewSchema>;

export const RunEventName = {
  ToolConfirmation: 'tool_confirmation',
  ToolResult: 'tool_result',
  Text: 'text',
  Status: 'status',
  Done: 'done',
  /** Runbook runs: a node changed state (one event per transition). */
  Node: 'node',
  /** A parked call was decided: by whom (people, a standing rule, expiry), recorded by the worker. */
  Decision: 'decision',
} as const;

export const RunEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal(RunEventName.ToolConfirmation), runId: IdSchema, call: PendingCallSchema }),
  z.object({
    type: z.literal(RunEventName.ToolResult),
    runId: IdSchema,
    callId: IdSchema,
    toolName: ToolNameSchema,
    outcome: z.string(),
    content: z.string(),
  }),
  z.object({ type: z.literal(RunEventName.Text), runId: IdSchema, text: z.string() }),
  z.object({ type: z.literal(RunEventName.Status), runId: IdSchema, status: RunStatusSchema }),
  z.object({
    type: z.literal(RunEventName.Done),
    runId: IdSchema,
    status: RunStatusSchema,
    result: z.string().optional(),
  }),
  z.object({
    type: z.literal(RunEventName.Node),
    runId: IdSchema,
    /** The node's path, `parent/sub/node`. */
    node: z.string().max(400),
    status: NodeStatusSchema,
    /** The call the node waits on or ran, when it has one. */
    callId: IdSchema.optional(),
  }),
  z.object({
    type: z.literal(RunEventName.Decision),
    runId: IdSchema,
    callId: IdSchema,
    toolName: ToolNameSchema,
    decision: DecisionValueSchema,
    decidedBy: DecidedBySchema,
    /** The people who decided (empty for a standing rule, expiry, no route). */
    approvers: z.array(IdSchema),
    /** The standing rule that approved it. */
    rule: IdSchema.optional(),
    /** The decision's reason: a denier's words, or the standing rule's "standing rule … (by …, until …)". */
    reason: z.string().optional(),
    /** Decision "respond": the approver's text, which the model gets as the call's result. */
    response: z.string().optional(),
  }),
]);
export type RunEvent = z.infer<typeof RunEventSchema>;

/** A run status in one letter, as the run's event history stores it. */
export const RUN_STATUS_CODES = {
  queued: 'q',
  running: 'r',
  awaiting_confirmation: 'a',
  completed: 'c',
  failed: 'f',
} as const satisfies Record<RunStatus, string>;
const RunStatusCodeSchema = z
  .enum(Object.values(RUN_STATUS_CODES))
  .transform((code) =>
    (Object.keys(RUN_STATUS_CODES) as RunStatus[]).find((status) => RUN_STATUS_CODES[status] === code)!,
  );

/**
 * A run event as kept in the run's history and sent over pub/sub: a short tuple without the run ID (the run's key
 * says it) and without the confirmation's fingerprint (a function of the tool name and arguments, computed again
 * when read), with statuses in one letter. Parked runs are at rest by the 100,000s, so every byte counts: what a
 * parked run's history holds (its start, its confirmation and the park) fits in its hash's memory slack.
 */
export const StoredRunEventSchema = z.union([
  z.tuple([z.literal('s'), RunStatusCodeSchema]),
  z.tuple([z.literal('c'), IdSchema, ToolNameSchema, ToolArgsSchema, TierSchema]),
  z.tuple([z.literal('r'), IdSchema, ToolNameSchema, z.string(), z.string()]),
  z.tuple([z.literal('t'), z.string()]),
  z.tuple([z.literal('d'), RunStatusCodeSchema]),
  z.tuple([z.literal('d'), RunStatusCodeSchema, z.string()]),
  z.tuple([z.literal('n'), z.string().max(400), NodeStatusSchema]),
  z.tuple([z.literal('n'), z.string().max(400), NodeStatusSchema, IdSchema]),
  // A decision: call, tool, decision, decided by, approvers, reason ('' none; a respond's text for decision
  // "respond", which has no reason of its own), standing rule ('' none).
  z.tuple([
    z.literal('v'),
    IdSchema,
    ToolNameSchema,
    DecisionValueSchema,
    DecidedBySchema,
    z.array(IdSchema),
    z.string(),
    z.union([IdSchema, z.literal('')]),
  ]),
]);

/** One pub/sub message of run events: consecutive events of one run, the first numbered `seq`. */
export const RunEventBatchSchema = z.object({
  runId: IdSchema,
  seq: z.number().int().positive(),
  events: z.array(z.unknown()).min(1),
});

/**
 * The `Last-Event-ID` header of GET /runs/:runId/events: the number (SSE `id:`) of the last event the client
 * has; the stream goes on after it. Absent means from the start.
 */
export const LastEventIdSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'must be the number of an event (the id: field of the stream)')
  .transform(Number)
  .optional();
