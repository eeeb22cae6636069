// Countersign for the OpenAI Agents SDK (@openai/agents 0.20): a tool's `needsApproval` asks Countersign and its
// `execute` is guarded (it runs only once Countersign approved exactly these arguments, once); a run that stops on
// interruptions is parked (its RunState in a ParkedRunStore, each interruption a Countersign approval), and any process
// resumes it when the decisions are in, approving or rejecting each interruption by what Countersign decided.
import {
  run,
  RunState,
  tool,
  type Agent,
  type FunctionTool,
  type RunContext,
  type RunResult,
} from '@openai/agents';
import { z } from 'zod';
import { fingerprint } from '@countersign/authorization/fingerprint';
import type { CountersignClient, ExternalCall } from '../countersign-client';
import {
  CHANGED_AFTER_APPROVAL,
  notRunMessage,
  refusalMessage,
  respondedMessage,
} from '../decision-messages';
import { CountersignError } from '../errors';
import { checkRequester, requesterMismatch } from '../requester';
import type { ParkedRun, ParkedRunStore } from './parked-run-store';

/** A tool whose calls need a person's approval: its parameters are a zod object (read again on resume). */
export interface CountersignToolOptions<P extends z.ZodObject> {
  name: string;
  description: string;
  parameters: P;
  execute: (input: z.output<P>, context?: RunContext<unknown>) => unknown;
}

/** Per run: its ID (with a call ID, what makes a call the same call), and what approvers are shown. */
export interface CountersignRunOptions {
  runId: string;
  /** The person the agent acts for (the client needs an `actAs` entry for them). */
  onBehalfOf?: string;
  /** What the run is for, shown to approvers. */
  runDescription?: string;
  /** Your own run context (an object); the adapter adds its `countersign` field. */
  context?: Record<string, unknown>;
}

export interface ResumeOptions {
  /**
   * How long to wait for the decisions.
   * @defaultValue 0: resume only if every interruption is decided now, else stay parked
   */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Any agent, and its run's result: the adapter reads only names, tools, interruptions and the state. */
type AnyAgent = Agent<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type AnyRunResult = RunResult<any, AnyAgent>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ParkedApproval {
  callId: string;
  toolName: string;
  approvalId: string;
  status: 'pending' | 'allow' | 'deny' | 'respond';
  inboxUrl: string;
}

export type CountersignRunOutcome =
  | { status: 'completed'; runId: string; result: AnyRunResult }
  | { status: 'parked'; runId: string; approvals: ParkedApproval[] };

export interface CountersignAgentsOptions {
  client: CountersignClient;
  store: ParkedRunStore;
}

const RunContextSchema = z.object({
  countersign: z.object({
    runId: z.string().min(1),
    onBehalfOf: z.string().optional(),
    runDescription: z.string().optional(),
  }),
});
type CountersignContext = z.infer<typeof RunContextSchema>['countersign'];

/** What the adapter keeps of each tool it made: how to read its arguments again from a stored RunState. */
interface GuardedTool {
  parse: (args: unknown) => Record<string, unknown>;
  description: string;
}

export class CountersignAgents {
  private readonly client: CountersignClient;
  private readonly store: ParkedRunStore;
  private readonly guarded = new WeakMap<object, GuardedTool>();

  constructor(options: CountersignAgentsOptions) {
    this.client = options.client;
    this.store = options.store;
  }

  /** A function tool whose calls wait for Countersign, and run only as approved, once. */
  tool<P extends z.ZodObject>(options: CountersignToolOptions<P>): FunctionTool<unknown, P, unknown> {
    const { name, description, parameters } = options;
    const parse = (args: unknown) => parameters.parse(args) as Record<string, unknown>;
    const made = tool({
      name,
      description,
      parameters,
      // Asks Countersign. Not yet decided: the run stops on an interruption (park it). Decided: execute, guarded,
      // runs an approval or tells the model the refusal, without a needless interruption.
      needsApproval: async (context: RunContext, input: unknown, callId?: string) => {
        const call = this.callOf(context, name, description, input, callId);
        const view = await this.client.submit(call);
        checkRequester(view, call.onBehalfOf);
        return view.status === 'pending';
      },
      execute: async (input: unknown, context?: RunContext, details?: { toolCall?: { callId?: string } }) => {
        const call = this.callOf(context, name, description, input, details?.toolCall?.callId);
        // No waiting here: a call reaches execute decided (approved on resume, or decided before it was asked).
        const result = await this.client.guard(
          call,
          (approved) => options.execute(parameters.parse(approved), context as RunContext<unknown>),
          { timeoutMs: 0 },
        );
        return result.status === 'executed' ? result.value : notRunMessage(result);
      },
    } as Parameters<typeof tool>[0]) as unknown as FunctionTool<unknown, P, unknown>;
    this.guarded.set(made, { parse, description });
    return made;
  }

  /** Runs the agent; when it stops on interruptions, parks the run and says which approvals it waits for. */
  async run(agent: AnyAgent, input: string, options: CountersignRunOptions): Promise<CountersignRunOutcome> {
    const countersign: CountersignContext = {
      runId: options.runId,
      onBehalfOf: options.onBehalfOf,
      runDescription: options.runDescription,
    };
    const result = await run(agent, input, { context: { ...options.context, countersign } });
    return this.settle(agent, countersign, result);
  }

  /**
   * Resumes a parked run in this process: each interruption is approved or rejected (with the reason) by what
   * Countersign decided, and refused when the call in the stored state is not the one approved. Stays parked while
   * any is undecided.
   */
  async resume(agent: AnyAgent, runId: string, options: ResumeOptions = {}): Promise<CountersignRunOutcome> {
    const parked = await this.store.load(runId);
    if (!parked) throw new CountersignError(`no parked run ${runId}`);
    if (parked.agent !== agent.name)
      throw new CountersignError(`run ${runId} was parked by agent ${parked.agent}, not ${agent.name}`);
    const state = await RunState.fromString(agent, parked.state);
    const context = RunContextSchema.safeParse(state._context.context);
    if (!context.success || context.data.countersign.runId !== runId)
      throw new CountersignError(`the stored state of run ${runId} is not a Countersign run of that ID`);
    const deadline = Date.now() + (options.timeoutMs ?? 0);
    const approvals: ParkedApproval[] = [];
    const { onBehalfOf } = context.data.countersign;
    for (const item of state.getInterruptions()) {
      const verdict = await this.verdict(agent, parked, item, onBehalfOf, deadline, options.signal);
      if (verdict.approval) approvals.push(verdict.approval);
      if (verdict.action === 'approve') state.approve(item);
      else if (verdict.action === 'reject') state.reject(item, { message: verdict.message });
    }
    if (approvals.some((a) => a.status === 'pending')) return { status: 'parked', runId, approvals };
    const result = await run(agent, state);
    return this.settle(agent, context.data.countersign, result);
  }

  /**
   * What to do with one interruption of a stored run, by what Countersign decided for that exact call of the run's
   * person (`onBehalfOf`).
   */
  private async verdict(
    agent: AnyAgent,
    parked: ParkedRun,
    item: ReturnType<RunState<unknown, AnyAgent>['getInterruptions']>[number],
    onBehalfOf: string | undefined,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<
    | { action: 'approve'; approval: ParkedApproval }
    | { action: 'reject'; message: string; approval?: ParkedApproval }
    | { action: 'wait'; approval: ParkedApproval }
  > {
    const callId = callIdOf(item);
    const toolName = item.name ?? '';
    const entry = parked.approvals.find((a) => a.callId === callId && a.toolName === toolName);
    const guarded = this.guardedToolOf(agent, toolName);
    if (!entry || !guarded) return { action: 'reject', message: CHANGED_AFTER_APPROVAL };
    const args = readArguments(guarded, item.arguments);
    const view = await this.client.waitForDecision(entry.approvalId, {
      timeoutMs: Math.max(0, deadline - Date.now()),
      signal,
      onBehalfOf,
    });
    const approval = {
      callId: entry.callId,
      toolName,
      approvalId: entry.approvalId,
      status: view.status,
      inboxUrl: view.inboxUrl,
    };
    // The approval must be for this run, this call, this person and these arguments: a stored state (or its record)
    // edited after approval names another call, and is refused.
    const same =
      args !== undefined &&
      requesterMismatch(view, onBehalfOf) === undefined &&
      view.runId === parked.runId &&
      view.callId === callId &&
      view.toolName === toolName &&
      view.fingerprint === fingerprint(toolName, args) &&
      entry.fingerprint === view.fingerprint;
    if (!same) return { action: 'reject', message: CHANGED_AFTER_APPROVAL, approval };
    if (view.status === 'allow') return { action: 'approve', approval };
    if (view.status === 'deny') return { action: 'reject', message: refusalMessage(view), approval };
    // A respond: the call does not run; the model gets the approver's text as the call's result and re-plans.
    if (view.status === 'respond')
      return { action: 'reject', message: respondedMessage(toolName, view), approval };
    return { action: 'wait', approval };
  }

  /** A finished run is forgotten; an interrupted one is parked, each interruption submitted (idempotently). */
  private async settle(
    agent: AnyAgent,
    countersign: CountersignContext,
    result: AnyRunResult,
  ): Promise<CountersignRunOutcome> {
    const { runId } = countersign;
    if (result.interruptions.length === 0) {
      await this.store.delete(runId);
      return { status: 'completed', runId, result };
    }
    const parked: ParkedRun = {
      version: 1,
      runId,
      agent: agent.name,
      state: result.state.toString(),
      approvals: [],
      parkedAt: new Date().toISOString(),
    };
    const approvals: ParkedApproval[] = [];
    for (const item of result.interruptions) {
      const toolName = item.name ?? '';
      const guarded = this.guardedToolOf(agent, toolName);
      if (!guarded)
        throw new CountersignError(
          `tool ${toolName} asks for approval but was not made by CountersignAgents.tool`,
        );
      const args = readArguments(guarded, item.arguments);
      if (!args) throw new CountersignError(`the arguments of ${toolName} (${callIdOf(item)}) do not parse`);
      const call = callFor(countersign, toolName, guarded.description, args, callIdOf(item));
      const view = await this.client.submit(call);
      checkRequester(view, call.onBehalfOf);
      parked.approvals.push({
        callId: callIdOf(item),
        toolName,
        approvalId: view.approvalId,
        fingerprint: view.fingerprint,
      });
      approvals.push({
        callId: callIdOf(item),
        toolName,
        approvalId: view.approvalId,
        status: view.status,
        inboxUrl: view.inboxUrl,
      });
    }
    await this.store.save(parked);
    return { status: 'parked', runId, approvals };
  }

  private guardedToolOf(agent: AnyAgent, toolName: string): GuardedTool | undefined {
    const found = (agent.tools as { name?: string }[]).find((t) => t.name === toolName);
    return found ? this.guarded.get(found) : undefined;
  }

  /** The Countersign call of a tool call, from the run's context; without it nothing may run (fail closed). */
  private callOf(
    context: RunContext | undefined,
    toolName: string,
    toolDescription: string,
    input: unknown,
    callId: string | undefined,
  ): ExternalCall {
    const parsed = RunContextSchema.safeParse(context?.context);
    if (!parsed.success)
      throw new CountersignError(`${toolName}: the run was not started by CountersignAgents.run (no run ID)`);
    if (!callId) throw new CountersignError(`${toolName}: the tool call has no call ID`);
    return callFor(
      parsed.data.countersign,
      toolName,
      toolDescription,
      input as Record<string, unknown>,
      callId,
    );
  }
}

function callFor(
  countersign: CountersignContext,
  toolName: string,
  toolDescription: string,
  args: Record<string, unknown>,
  callId: string,
): ExternalCall {
  return {
    runId: countersign.runId,
    callId,
    toolName,
    args,
    onBehalfOf: countersign.onBehalfOf,
    context: { runDescription: countersign.runDescription, toolDescription },
  };
}

function callIdOf(item: { rawItem: unknown }): string {
  const raw = item.rawItem as { callId?: string; id?: string };
  return raw.callId ?? raw.id ?? '';
}

/** The arguments of a stored call as the tool reads them (its zod schema); undefined when they do not parse. */
function readArguments(guarded: GuardedTool, json: string | undefined): Record<string, unknown> | undefined {
  try {
    return guarded.parse(JSON.parse(json ?? '{}'));
  } catch {
    return undefined;
  }
}
