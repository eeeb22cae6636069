// Runbooks: durable graphs of steps that pause for approval. The definition file's schema, the body that starts a
// runbook run, and the graph position GET /runs/:runId shows for one.
import { z } from 'zod';
import { IdSchema, ToolNameSchema } from './common.schema';

/**
 * Names every JavaScript object has (`constructor`, `toString`, `__proto__`, …): a runbook may not use one as a node
 * ID, channel, runbook name or path segment, so no lookup of a name from a file can ever reach Object.prototype.
 */
export const BUILT_IN_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** Why `name` cannot be a name in a runbook, or undefined when it can. */
export function builtInNameProblem(name: string): string | undefined {
  return BUILT_IN_NAMES.has(name)
    ? `"${name}" is a built-in property name of every JavaScript object; choose another name`
    : undefined;
}

/** Refuses a built-in name (see BUILT_IN_NAMES); `split` checks each segment of a dotted path. */
const notBuiltIn =
  (split = false) =>
  (value: string, ctx: z.RefinementCtx) => {
    for (const name of split ? value.split('.') : [value]) {
      const problem = builtInNameProblem(name);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }
  };

/** Node IDs are path segments (`parent/sub/node`) and parts of call IDs (`rb.parent.sub.node@1`): plain words only. */
export const RunbookNodeIdSchema = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-zA-Z][a-zA-Z0-9_-]*$/, 'must start with a letter and contain only letters, digits, _ and -')
  .superRefine(notBuiltIn());

export const RunbookNameSchema = RunbookNodeIdSchema;

/** The types a state channel may hold; a value written to a channel is checked against it. */
export const CHANNEL_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'any'] as const;
export const ChannelSchema = z
  .object({
    type: z.enum(CHANNEL_TYPES),
    default: z.unknown().optional(),
    description: z.string().optional(),
  })
  .strict();
export type Channel = z.infer<typeof ChannelSchema>;

/**
 * Where a step's result goes: a channel, or a field of the (JSON) result into a channel. `from` is a dotted path
 * into the result, e.g. `status`.
 */
const WriteSchema = z.union([
  RunbookNodeIdSchema,
  z
    .object({ channel: RunbookNodeIdSchema, from: z.string().min(1).max(200).superRefine(notBuiltIn(true)) })
    .strict(),
]);
export type RunbookWrite = z.infer<typeof WriteSchema>;

/** A dotted path into the state, e.g. `state.status.health` (no expressions: a lookup and nothing else). */
const StatePathSchema = z
  .string()
  .regex(
    /^state\.[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*$/,
    'must be a dotted path starting with state., e.g. state.service',
  )
  .superRefine(notBuiltIn(true));

/** A branch's condition: one small declarative comparison on the state. */
const ConditionSchema = z.union([
  z.object({ path: StatePathSchema, equals: z.unknown() }).strict(),
  z.object({ path: StatePathSchema, in: z.array(z.unknown()).min(1) }).strict(),
  z.object({ path: StatePathSchema, exists: z.boolean() }).strict(),
]);
export type RunbookCondition = z.infer<typeof ConditionSchema>;

const edges = {
  /** The node after this one; none ends the runbook (or, inside a parallel branch, the branch). */
  next: RunbookNodeIdSchema.optional(),
};
/** Where a refused call (denied, expired, refused by policy or RBAC) goes; without one a refusal fails the runbook. */
const deniedEdge = { denied: RunbookNodeIdSchema.optional() };

export const RunbookNodeSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('tool'),
      tool: ToolNameSchema,
      /** Values may be templates: `{{state.service}}` alone keeps the value's type; inside a string it is text. */
      args: z.record(z.string(), z.unknown()).default({}),
      write: WriteSchema.optional(),
      ...edges,
      ...deniedEdge,
    })
    .strict(),
  z
    .object({
      kind: z.literal('agent'),
      agent: IdSchema,
      prompt: z.string().min(1).max(10_000),
      /** The agent's final text goes here. */
      write: RunbookNodeIdSchema.optional(),
      ...edges,
      ...deniedEdge,
    })
    .strict(),
  z
    .object({
      kind: z.literal('branch'),
      when: ConditionSchema,
      then: RunbookNodeIdSchema,
      else: RunbookNodeIdSchema,
    })
    .strict(),
  z
    .object({
      kind: z.literal('parallel'),
      /** Each branch starts at one of these nodes and ends where its chain has no `next`; `next` is the join. */
      branches: z.array(RunbookNodeIdSchema).min(2).max(16),
      ...edges,
    })
    .strict(),
  z
    .object({
      kind: z.literal('runbook'),
      runbook: RunbookNameSchema,
      /** The sub-runbook's starting state (templates, as a tool step's args). */
      input: z.record(z.string(), z.unknown()).default({}),
      ...edges,
      ...deniedEdge,
    })
    .strict(),
  z
    .object({
      kind: z.literal('gate'),
      /** What approvers are asked (a template). */
      message: z.string().min(1).max(2_000),
      ...edges,
      ...deniedEdge,
    })
    .strict(),
]);
export type RunbookNode = z.infer<typeof RunbookNodeSchema>;

export const RunbookDefinitionSchema = z
  .object({
    name: RunbookNameSchema,
    description: z.string().max(2_000).default(''),
    /** The agent (agents config) whose tools, tiers, confirmation policy and roles the runbook's tool steps use. */
    agent: IdSchema,
    entry: RunbookNodeIdSchema,
    state: z.record(RunbookNodeIdSchema, ChannelSchema).default({}),
    /** In the order the runbook is read: "step 3 of 7" counts in it. */
    nodes: z.record(RunbookNodeIdSchema, RunbookNodeSchema),
  })
  .strict();
export type RunbookDefinition = z.infer<typeof RunbookDefinitionSchema>;

/** `POST /runbooks/:name/runs`: the starting state (channels by name); the requester is the caller, as for runs. */
export const StartRunbookBodySchema = z
  .object({
    input: z.record(z.string(), z.unknown()).default({}),
    onBehalfOf: IdSchema.optional(),
  })
  .strict();
export type StartRunbookBody = z.infer<typeof StartRunbookBodySchema>;

/** `POST /runbooks/validate`: a definition checked as start-up checks a file (200, or 400 naming node and field). */
export const ValidateRunbookBodySchema = z.object({ definition: z.unknown() }).strict();

export const NODE_STATUSES = ['running', 'waiting', 'done', 'refused', 'failed', 'skipped'] as const;
export const NodeStatusSchema = z.enum(NODE_STATUSES);
export type NodeStatus = z.infer<typeof NodeStatusSchema>;

/** One node's state as the run's history says it. */
export const RunbookNodeViewSchema = z.object({
  path: z.string(),
  kind: z.string(),
  status: NodeStatusSchema,
  callIds: z.array(IdSchema).optional(),
  output: z.unknown().optional(),
});
export type RunbookNodeView = z.infer<typeof RunbookNodeViewSchema>;

/** A runbook run's graph position: the nodes it waits on or runs, every node reached so far, and the state. */
export const RunbookViewSchema = z.object({
  name: RunbookNameSchema,
  position: z.array(z.string()),
  nodes: z.array(RunbookNodeViewSchema),
  state: z.record(z.string(), z.unknown()),
});
export type RunbookView = z.infer<typeof RunbookViewSchema>;

/** Runbook runs are runs of this agent name: `runbook.<name>` (routing rules can match it). */
export const RUNBOOK_AGENT_PREFIX = 'runbook.';
export const runbookAgentName = (name: string) => `${RUNBOOK_AGENT_PREFIX}${name}`;
/** The built-in tool an approval gate calls: confirm tier, no effect beyond saying it was approved. */
export const RUNBOOK_GATE_TOOL = 'runbook_gate';
