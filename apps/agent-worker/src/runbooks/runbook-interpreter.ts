// The runbook interpreter: a pure function of (definition, the run's checkpointed conversation) → the next turn's calls.
// Every call it asks for has an ID that names its node (`rb.<node path>@1`, agent steps `rb.<node path>@<agent's ID>`),
// and the run loop checkpoints each turn's calls and results as it does for any agent run, so walking the graph again
// over that history finds every node's state: a node with a result is never asked for again, and any replica resumes.
import {
  type Channel,
  type ChatMessage,
  type NodeStatus,
  type RunbookDefinition,
  type RunbookNode,
  type RunbookNodeView,
  RUNBOOK_GATE_TOOL,
} from '@countersign/contracts';
import type { ModelReply, ModelTool, ModelToolCall } from '../models/chat-model';
import { own } from './own';
import { lookup, render, TemplateError } from './runbook-template';

export const CALL_PREFIX = 'rb.';
/** The assistant text that carries agent steps' final texts into the history (they have no call of their own). */
export const OUTPUTS_MARKER = '[runbook outputs] ';
const MAX_CALL_ID = 128;

/** What an agent step needs: its model's next turn and the tools it may use. */
export interface AgentStepRunner {
  tools(agent: string): ModelTool[] | undefined;
  next(agent: string, messages: ChatMessage[], tools: ModelTool[]): Promise<ModelReply>;
}

/**
 * An agent step's model failed (a provider down, a timeout): not the interpreter's doing, so the walk hands the cause
 * on and the job is retried. Every other error in a walk is a fault of the walk, the same at every attempt: it fails
 * the run at once, naming the node.
 */
class AgentStepError extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
    this.name = this.constructor.name;
  }
}

export interface NodeEvent {
  node: string;
  status: NodeStatus;
  callId?: string;
}

export type WalkEnd =
  | { kind: 'calls'; calls: ModelToolCall[] }
  | { kind: 'completed'; state: Record<string, unknown> }
  | { kind: 'failed'; reason: string }
  /** Only when reading (no agent runner): the walk stops where a call has no result yet. */
  | { kind: 'waiting' };

export interface WalkResult {
  end: WalkEnd;
  /** Transitions that happened at this turn (each reported once over a run's turns). */
  events: NodeEvent[];
  /** Every node reached, in the order reached. */
  nodes: RunbookNodeView[];
  state: Record<string, unknown>;
  /** Agent steps that finished at this turn: node path → final text. */
  outputs: Record<string, string>;
}

/** The call ID of a tool step or gate of the node at `path`. */
export const stepCallId = (path: string[]) => `${CALL_PREFIX}${path.join('.')}@1`;
/** The node path a runbook call ID belongs to (`parent/sub/node`), or undefined for another call. */
export function nodePathOf(callId: string): string[] | undefined {
  if (!callId.startsWith(CALL_PREFIX) || !callId.includes('@')) return undefined;
  return callId.slice(CALL_PREFIX.length, callId.indexOf('@')).split('.');
}

interface History {
  /** callId → the turn (1-based count of assistant messages) that asked for it. */
  asked: Map<string, number>;
  /** callId → its result and the turn at which the interpreter saw it. */
  results: Map<string, { content: string; name: string; turn: number }>;
  outputs: Map<string, { text: string; turn: number }>;
  assistant: ChatMessage[];
  /** How many turns are behind: the interpreter now decides turn `now + 1`. */
  now: number;
}

function readHistory(messages: ChatMessage[]): History {
  const history: History = {
    asked: new Map(),
    results: new Map(),
    outputs: new Map(),
    assistant: [],
    now: 0,
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      history.now += 1;
      history.assistant.push(message);
      for (const call of message.toolCalls ?? []) history.asked.set(call.id, history.now);
      if (typeof message.content === 'string' && message.content.startsWith(OUTPUTS_MARKER)) {
        const outputs = safeJson(message.content.slice(OUTPUTS_MARKER.length)) as
          Record<string, string> | undefined;
        // Written when the turn before this one was decided.
        for (const [path, text] of Object.entries(outputs ?? {}))
          history.outputs.set(path, { text, turn: history.now - 1 });
      }
    } else if (message.role === 'tool') {
      history.results.set(message.toolCallId, {
        content: message.content,
        name: message.name,
        turn: history.now,
      });
    }
  }
  return history;
}

/** How a call ended, read from what the model was told (tool messages carry no outcome field). */
export type CallEnd = 'executed' | 'refused' | 'failed' | 'manual';
export function classifyResult(content: string): CallEnd {
  if (/^Tool execution was (denied|refused)/.test(content)) return 'refused';
  if (
    /^Tool "[^"]+" was refused/.test(content) ||
    // An approver's response (responseMessage): the step did not run, like a denial.
    /^Tool "[^"]+" was not run: the approver \(/.test(content) ||
    /^(Permission "|User "[^"]+" lacks permission)/.test(content)
  )
    return 'refused';
  if (/^Tool "[^"]+" must be done by a person/.test(content)) return 'manual';
  if (/^Tool "[^"]+" failed:/.test(content) || /^Unknown tool/i.test(content)) return 'failed';
  return 'executed';
}

type ChainEnd =
  | { kind: 'done'; at: number }
  | { kind: 'blocked' }
  | { kind: 'refused'; reason: string; at: number }
  | { kind: 'failed'; reason: string; at: number };

/** The starting state: each channel's default, then the input (checked against the channels' types). */
export function initialState(definition: RunbookDefinition, input: Record<string, unknown>, where: string) {
  const state: Record<string, unknown> = {};
  for (const [name, channel] of Object.entries(definition.state))
    if (channel.default !== undefined) state[name] = channel.default;
  for (const [name, value] of Object.entries(input)) {
    const channel = own(definition.state, name);
    if (!channel)
      throw new TemplateError(
        `${where}.${name}`,
        `runbook ${definition.name} has no state channel "${name}"`,
      );
    const problem = typeProblem(channel, value);
    if (problem) throw new TemplateError(`${where}.${name}`, problem);
    state[name] = value;
  }
  return state;
}

function typeProblem(channel: Channel, value: unknown): string | undefined {
  const actual = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  if (channel.type === 'any' || channel.type === actual) return undefined;
  return `expected ${channel.type}, got ${actual}`;
}

export class RunbookWalk {
  private readonly history: History;
  private readonly events: NodeEvent[] = [];
  private readonly nodes: RunbookNodeView[] = [];
  private readonly calls: ModelToolCall[] = [];
  private readonly outputs: Record<string, string> = {};

  constructor(
    private readonly lookupRunbook: (name: string) => RunbookDefinition | undefined,
    messages: ChatMessage[],
    /** Absent when only reading the run (GET): agent steps are not asked for a turn. */
    private readonly agents?: AgentStepRunner,
  ) {
    this.history = readHistory(messages);
  }

  async walk(root: RunbookDefinition, input: Record<string, unknown>): Promise<WalkResult> {
    let state: Record<string, unknown> = {};
    let end: WalkEnd;
    try {
      state = initialState(root, input, 'input');
      const chain = await this.chain(root, root.entry, [], state, 0);
      end = this.toEnd(chain, state);
    } catch (error) {
      if (error instanceof AgentStepError) throw error.reason;
      if (!(error instanceof TemplateError)) throw error;
      end = { kind: 'failed', reason: `runbook ${root.name}: ${error.message}` };
    }
    return { end, events: this.events, nodes: this.nodes, state, outputs: this.outputs };
  }

  private toEnd(chain: ChainEnd, state: Record<string, unknown>): WalkEnd {
    switch (chain.kind) {
      case 'done':
        return { kind: 'completed', state };
      case 'refused':
      case 'failed':
        return { kind: 'failed', reason: chain.reason };
      case 'blocked':
        return this.calls.length > 0 ? { kind: 'calls', calls: this.calls } : { kind: 'waiting' };
    }
  }

  /** Runs nodes from `id` along their edges until the chain ends, blocks on a call, or fails. `at`: turn reached. */
  private async chain(
    definition: RunbookDefinition,
    start: string,
    prefix: string[],
    state: Record<string, unknown>,
    reachedAt: number,
  ): Promise<ChainEnd> {
    let id: string | undefined = start;
    let at = reachedAt;
    while (id) {
      const path = [...prefix, id];
      const node = own(definition.nodes, id);
      if (!node) return this.fail(path, 'unknown', at, `runbook ${definition.name}: no node "${id}"`);
      const end = await this.guardedNode(definition, node, path, state, at);
      if (end.kind === 'blocked') return end;
      at = end.at;
      if (end.kind === 'done') {
        id = end.next;
        continue;
      }
      const denied = 'denied' in node ? node.denied : undefined;
      if (end.kind === 'refused' && denied) {
        id = denied;
        continue;
      }
      return end;
    }
    return { kind: 'done', at };
  }

  /** One node; an error of the walk itself fails the node with what went wrong (an agent's model error goes on). */
  private async guardedNode(
    definition: RunbookDefinition,
    node: RunbookNode,
    path: string[],
    state: Record<string, unknown>,
    at: number,
  ): ReturnType<RunbookWalk['node']> {
    try {
      return await this.node(definition, node, path, state, at);
    } catch (error) {
      if (error instanceof AgentStepError || error instanceof TemplateError) throw error;
      const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      const where = `runbook ${definition.name}: node "${path.at(-1)}"`;
      return this.fail(path, node.kind, at, `${where}: internal error, the run cannot go on (${what})`);
    }
  }

  private async node(
    definition: RunbookDefinition,
    node: RunbookNode,
    path: string[],
    state: Record<string, unknown>,
    at: number,
  ): Promise<Exclude<ChainEnd, { kind: 'done' }> | { kind: 'done'; at: number; next?: string }> {
    const where = `runbook ${definition.name}: node "${path.at(-1)}"`;
    switch (node.kind) {
      case 'branch': {
        const next = holds(node.when, state) ? node.then : node.else;
        this.note(path, node.kind, 'done', at, { output: next });
        return { kind: 'done', at, next };
      }
      case 'tool':
      case 'gate':
        return this.step(definition, node, path, state, at, where);
      case 'parallel': {
        this.note(path, node.kind, 'running', at);
        const ends: ChainEnd[] = [];
        // One mutable state shared in branch order: deterministic, so every replay finds the same state.
        for (const branch of node.branches) ends.push(await this.chain(definition, branch, path, state, at));
        const stop = ends.find((e) => e.kind === 'failed' || e.kind === 'refused');
        if (stop) return stop;
        if (ends.some((e) => e.kind === 'blocked')) return { kind: 'blocked' };
        const joined = Math.max(at, ...ends.map((e) => (e as { at: number }).at));
        this.note(path, node.kind, 'done', joined);
        return { kind: 'done', at: joined, next: node.next };
      }
      case 'runbook': {
        const sub = this.lookupRunbook(node.runbook);
        if (!sub)
          return this.fail(path, node.kind, at, `${where}: field "runbook": no runbook "${node.runbook}"`);
        let subState: Record<string, unknown>;
        try {
          subState = initialState(
            sub,
            render(node.input, state, 'input') as Record<string, unknown>,
            'input',
          );
        } catch (error) {
          if (error instanceof TemplateError)
            return this.fail(path, node.kind, at, `${where}: ${error.message}`);
          throw error;
        }
        this.note(path, node.kind, 'running', at);
        const end = await this.chain(sub, sub.entry, path, subState, at);
        // The sub-runbook's state is kept under its node's key, apart from the parent's channels.
        this.view(path).output = subState;
        if (end.kind === 'done') this.note(path, node.kind, 'done', end.at);
        if (end.kind === 'refused' || end.kind === 'failed') this.note(path, node.kind, end.kind, end.at);
        return end.kind === 'done' ? { ...end, next: node.next } : end;
      }
      case 'agent':
        return this.agentStep(definition, node, path, state, at, where);
      default:
        return this.fail(path, 'unknown', at, `${where}: field "kind": not a kind of node`);
    }
  }

  /** A tool step or a gate: one call, asked for once; its result moves the node on. */
  private step(
    definition: RunbookDefinition,
    node: Extract<RunbookNode, { kind: 'tool' | 'gate' }>,
    path: string[],
    state: Record<string, unknown>,
    at: number,
    where: string,
  ): ChainEnd | { kind: 'done'; at: number; next?: string } {
    const callId = stepCallId(path);
    const asked = this.history.asked.get(callId);
    if (asked === undefined) {
      let call: ModelToolCall;
      try {
        call = this.callOf(definition, node, path, state, callId);
      } catch (error) {
        if (error instanceof TemplateError)
          return this.fail(path, node.kind, at, `${where}: ${error.message}`);
        throw error;
      }
      // Reading only: a node not asked for yet has not started (it waits for the turn its chain is in to settle).
      if (!this.agents) return { kind: 'blocked' };
      this.calls.push(call);
      this.note(path, node.kind, 'running', this.history.now, { callId });
      return { kind: 'blocked' };
    }
    this.note(path, node.kind, 'running', asked - 1, { callId });
    const result = this.history.results.get(callId);
    if (!result) return { kind: 'blocked' };
    const ended = classifyResult(result.content);
    if (ended === 'refused') {
      this.note(path, node.kind, 'refused', result.turn, { callId, output: result.content });
      return { kind: 'refused', at: result.turn, reason: `${where}: ${result.content}` };
    }
    if (ended === 'failed')
      return this.fail(path, node.kind, result.turn, `${where}: ${result.content}`, callId);
    if (node.kind === 'tool' && node.write && ended === 'executed') {
      const problem = this.write(definition, node.write, result.content, state);
      if (problem)
        return this.fail(path, node.kind, result.turn, `${where}: field "write": ${problem}`, callId);
    }
    this.note(path, node.kind, 'done', result.turn, { callId, output: excerptOf(result.content) });
    return { kind: 'done', at: result.turn, next: node.next };
  }

  private callOf(
    definition: RunbookDefinition,
    node: Extract<RunbookNode, { kind: 'tool' | 'gate' }>,
    path: string[],
    state: Record<string, unknown>,
    callId: string,
  ): ModelToolCall {
    if (node.kind === 'tool')
      return {
        id: callId,
        name: node.tool,
        args: render(node.args, state, 'args') as Record<string, unknown>,
      };
    return {
      id: callId,
      name: RUNBOOK_GATE_TOOL,
      args: {
        runbook: definition.name,
        node: path.join('/'),
        message: render(node.message, state, 'message'),
      },
    };
  }

  /** An agent step: the agent's own conversation (its calls are the ones under this node's prefix). */
  private async agentStep(
    definition: RunbookDefinition,
    node: Extract<RunbookNode, { kind: 'agent' }>,
    path: string[],
    state: Record<string, unknown>,
    at: number,
    where: string,
  ): Promise<ChainEnd | { kind: 'done'; at: number; next?: string }> {
    const key = path.join('/');
    const done = this.history.outputs.get(key);
    if (done) {
      this.note(path, node.kind, 'done', done.turn, { output: done.text });
      if (node.write) state[node.write] = done.text;
      return { kind: 'done', at: done.turn, next: node.next };
    }
    let prompt: string;
    try {
      prompt = String(render(node.prompt, state, 'prompt'));
    } catch (error) {
      if (error instanceof TemplateError) return this.fail(path, node.kind, at, `${where}: ${error.message}`);
      throw error;
    }
    const prefix = `${CALL_PREFIX}${path.join('.')}@`;
    const conversation = this.agentConversation(prompt, prefix);
    const callIds = conversation
      .flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []) : []))
      .map((c) => prefix + c.id);
    const started = callIds.length > 0 ? this.history.asked.get(callIds[0])! - 1 : this.history.now;
    this.note(path, node.kind, 'running', Math.max(at, started), { callIds });
    const refused = callIds.find((id) => {
      const result = this.history.results.get(id);
      return result && classifyResult(result.content) === 'refused';
    });
    // The agent keeps its own policy: a refusal is told to it, and it re-plans. A `denied` edge takes the refusal
    // out of its hands instead.
    if (refused && node.denied) {
      const turn = this.history.results.get(refused)!.turn;
      this.note(path, node.kind, 'refused', turn, { callIds });
      return { kind: 'refused', at: turn, reason: `${where}: ${this.history.results.get(refused)!.content}` };
    }
    if (callIds.some((id) => !this.history.results.has(id)) || !this.agents) return { kind: 'blocked' };
    const tools = this.agents.tools(node.agent);
    if (!tools)
      return this.fail(path, node.kind, at, `${where}: field "agent": agent "${node.agent}" cannot run`);
    const reply = await this.agents.next(node.agent, conversation, tools).catch((error: unknown) => {
      throw new AgentStepError(error);
    });
    if (reply.kind === 'text') {
      this.outputs[key] = reply.text;
      this.note(path, node.kind, 'done', this.history.now, { callIds, output: reply.text });
      if (node.write) state[node.write] = reply.text;
      return { kind: 'done', at: this.history.now, next: node.next };
    }
    const allowed = new Set(tools.map((t) => t.name));
    const outside = reply.calls.find((c) => !allowed.has(c.name));
    if (outside)
      return this.fail(
        path,
        node.kind,
        this.history.now,
        `${where}: agent "${node.agent}" asked for "${outside.name}", not one of its tools`,
      );
    const calls = reply.calls.map((c) => ({ ...c, id: prefix + c.id }));
    const tooLong = calls.find((c) => c.id.length > MAX_CALL_ID);
    if (tooLong)
      return this.fail(path, node.kind, this.history.now, `${where}: call ID "${tooLong.id}" is too long`);
    this.calls.push(...calls);
    this.view(path).callIds = [...callIds, ...calls.map((c) => c.id)];
    return { kind: 'blocked' };
  }

  /** The agent's view: its prompt, then its own calls and results with the node prefix taken off their IDs. */
  private agentConversation(prompt: string, prefix: string): ChatMessage[] {
    const conversation: ChatMessage[] = [{ role: 'user', content: prompt }];
    for (const message of this.history.assistant) {
      if (message.role !== 'assistant') continue;
      const own = (message.toolCalls ?? []).filter((c) => c.id.startsWith(prefix));
      if (own.length === 0) continue;
      conversation.push({
        role: 'assistant',
        content: null,
        toolCalls: own.map((c) => ({ ...c, id: c.id.slice(prefix.length) })),
      });
      for (const call of own) {
        const result = this.history.results.get(call.id);
        if (result)
          conversation.push({
            role: 'tool',
            toolCallId: call.id.slice(prefix.length),
            name: result.name,
            content: result.content,
          });
      }
    }
    return conversation;
  }

  /** Writes a result (JSON when it parses, else its text) or a field of it into its channel, checking its type. */
  private write(
    definition: RunbookDefinition,
    write: NonNullable<Extract<RunbookNode, { kind: 'tool' }>['write']>,
    content: string,
    state: Record<string, unknown>,
  ): string | undefined {
    const parsed = safeJson(content) ?? content;
    const [channel, value] =
      typeof write === 'string' ? [write, parsed] : [write.channel, lookup(parsed, write.from)];
    if (value === undefined) return `the result has no field "${(write as { from: string }).from}"`;
    const declared = own(definition.state, channel);
    if (!declared) return `state channel "${channel}" is not declared`;
    const problem = typeProblem(declared, value);
    if (problem) return `state channel "${channel}": ${problem}`;
    state[channel] = value;
    return undefined;
  }

  private fail(path: string[], kind: string, at: number, reason: string, callId?: string): ChainEnd {
    this.note(path, kind, 'failed', at, callId ? { callId, output: reason } : { output: reason });
    return { kind: 'failed', at, reason };
  }

  /** Records the node's state; the transition is an event of this turn if it happened at this turn. */
  private note(
    path: string[],
    kind: string,
    status: NodeStatus,
    at: number,
    extra: { callId?: string; callIds?: string[]; output?: unknown } = {},
  ): void {
    const view = this.view(path, kind);
    view.status = status;
    const callIds = extra.callIds ?? (extra.callId ? [extra.callId] : undefined);
    if (callIds && callIds.length > 0) view.callIds = callIds;
    if (extra.output !== undefined) view.output = extra.output;
    if (at === this.history.now)
      this.events.push({ node: path.join('/'), status, ...(extra.callId ? { callId: extra.callId } : {}) });
  }

  private view(path: string[], kind = 'runbook'): RunbookNodeView {
    const key = path.join('/');
    let view = this.nodes.find((n) => n.path === key);
    if (!view) {
      view = { path: key, kind, status: 'running' };
      this.nodes.push(view);
    }
    return view;
  }
}

function holds(
  when: Extract<RunbookNode, { kind: 'branch' }>['when'],
  state: Record<string, unknown>,
): boolean {
  const value = lookup({ state }, when.path);
  if ('exists' in when) return (value !== undefined) === when.exists;
  if ('in' in when) return when.in.some((v) => sameJson(v, value));
  return sameJson(when.equals, value);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function excerptOf(content: string): string {
  return content.length <= 200 ? content : `${content.slice(0, 199)}…`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
