import type { ChatMessage, RunbookDefinition } from '@countersign/contracts';
import type { ModelReply } from '../models/chat-model';
import {
  type AgentStepRunner,
  classifyResult,
  type NodeEvent,
  RunbookWalk,
  type WalkResult,
} from './runbook-interpreter';
import { parseRunbook } from './runbook-library';
import { RunbookModel } from './runbook-model';

const parse = (d: unknown) => parseRunbook(JSON.stringify(d), 'spec');

const fanout = parse({
  name: 'fanout',
  agent: 'ops',
  entry: 'split',
  state: { service: { type: 'string', default: 'payments' }, status: { type: 'object' } },
  nodes: {
    split: { kind: 'parallel', branches: ['check', 'restart'], next: 'report' },
    check: {
      kind: 'tool',
      tool: 'get_service_status',
      args: { service: '{{state.service}}' },
      write: 'status',
    },
    restart: {
      kind: 'tool',
      tool: 'restart_service',
      args: { service: '{{state.service}}' },
      denied: 'undo',
    },
    undo: { kind: 'tool', tool: 'scale_service', args: { service: '{{state.service}}', replicas: 1 } },
    report: { kind: 'tool', tool: 'list_services' },
  },
});

const noAgents: AgentStepRunner = {
  tools: () => [],
  next: () => Promise.reject(new Error('no agent steps here')),
};

/** Plays the run loop: each turn's calls are answered by `answer` and appended, as the loop checkpoints them. */
class Play {
  messages: ChatMessage[] = [{ role: 'user', content: '{}' }];
  events: NodeEvent[] = [];
  asked: string[] = [];

  constructor(
    private readonly root: RunbookDefinition,
    private readonly answer: (callId: string) => string,
    private readonly agents: AgentStepRunner = noAgents,
    private readonly lookup: (name: string) => RunbookDefinition | undefined = () => undefined,
  ) {}

  async turn(): Promise<WalkResult> {
    const walked = await new RunbookWalk(this.lookup, this.messages, this.agents).walk(this.root, {});
    this.events.push(...walked.events);
    if (walked.end.kind === 'calls') {
      const { calls } = walked.end;
      this.asked.push(...calls.map((c) => c.id));
      this.messages.push({ role: 'assistant', content: null, toolCalls: calls });
      for (const call of calls)
        this.messages.push({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          content: this.answer(call.id),
        });
    }
    return walked;
  }

  async toEnd(): Promise<WalkResult> {
    for (let i = 0; i < 20; i++) {
      const walked = await this.turn();
      if (walked.end.kind !== 'calls') return walked;
    }
    throw new Error('no end');
  }
}

const results: Record<string, string> = {
  'rb.split.check@1': '{"name":"payments","status":"degraded"}',
  'rb.split.restart@1': '{"restarted":"payments"}',
};

describe('the runbook interpreter', () => {
  it('fans out in one turn, with arguments from the state and call IDs that name the node', async () => {
    const play = new Play(fanout, (id) => results[id] ?? '[]');
    const first = await play.turn();
    expect(first.end).toEqual({
      kind: 'calls',
      calls: [
        { id: 'rb.split.check@1', name: 'get_service_status', args: { service: 'payments' } },
        { id: 'rb.split.restart@1', name: 'restart_service', args: { service: 'payments' } },
      ],
    });
  });

  it('joins once every branch is done, never asks for a finished node again, and reports each transition once', async () => {
    const play = new Play(fanout, (id) => results[id] ?? '[]');
    const end = await play.toEnd();
    expect(end.end).toEqual({
      kind: 'completed',
      state: expect.objectContaining({ status: { name: 'payments', status: 'degraded' } }),
    });
    expect(play.asked).toEqual(['rb.split.check@1', 'rb.split.restart@1', 'rb.report@1']);
    const transitions = play.events.map((e) => `${e.node}:${e.status}`);
    expect(transitions).toEqual([
      'split:running',
      'split/check:running',
      'split/restart:running',
      'split/check:done',
      'split/restart:done',
      'split:done',
      'report:running',
      'report:done',
    ]);
  });

  it('follows a denied edge when a call is refused, and fails without one', async () => {
    const denied = (id: string) =>
      id === 'rb.split.restart@1' ? 'Tool execution was denied by the user.' : (results[id] ?? '[]');
    const play = new Play(fanout, denied);
    expect((await play.toEnd()).end.kind).toBe('completed');
    expect(play.asked).toContain('rb.split.undo@1');
    expect(play.events).toContainEqual({
      node: 'split/restart',
      status: 'refused',
      callId: 'rb.split.restart@1',
    });

    const strict = parse({
      ...fanout,
      nodes: { ...fanout.nodes, restart: { ...fanout.nodes.restart, denied: undefined }, undo: undefined },
    });
    const failing = new Play(strict, denied);
    const end = await failing.toEnd();
    expect(end.end).toEqual({
      kind: 'failed',
      reason: expect.stringContaining('node "restart": Tool execution was denied'),
    });
    expect(failing.asked).not.toContain('rb.report@1');
  });

  it("namespaces a sub-runbook's nodes under its node and keeps its state apart", async () => {
    const sub = parse({
      name: 'restart-one',
      agent: 'ops',
      entry: 'restart',
      state: { service: { type: 'string' } },
      nodes: { restart: { kind: 'tool', tool: 'restart_service', args: { service: '{{state.service}}' } } },
    });
    const parent = parse({
      name: 'parent',
      agent: 'ops',
      entry: 'sub',
      state: { target: { type: 'string', default: 'web' } },
      nodes: { sub: { kind: 'runbook', runbook: 'restart-one', input: { service: '{{state.target}}' } } },
    });
    const play = new Play(
      parent,
      () => 'ok',
      noAgents,
      (n) => (n === 'restart-one' ? sub : undefined),
    );
    const end = await play.toEnd();
    expect(play.asked).toEqual(['rb.sub.restart@1']);
    expect(end.end).toEqual({ kind: 'completed', state: { target: 'web' } });
    expect(end.nodes.find((n) => n.path === 'sub')?.output).toEqual({ service: 'web' });
    expect(end.nodes.map((n) => n.path)).toEqual(['sub', 'sub/restart']);
  });

  it('runs an agent step on its own conversation, prefixing its call IDs with the node', async () => {
    const agentic = parse({
      name: 'agentic',
      agent: 'ops',
      entry: 'triage',
      state: { summary: { type: 'string' } },
      nodes: { triage: { kind: 'agent', agent: 'ops', prompt: 'look', write: 'summary' } },
    });
    const seen: ChatMessage[][] = [];
    const agent: AgentStepRunner = {
      tools: () => [{ name: 'list_services', description: '', parameters: {} }],
      next: (_, messages): Promise<ModelReply> => {
        seen.push(messages);
        return Promise.resolve(
          messages.length === 1
            ? { kind: 'tool_calls', calls: [{ id: 'c1', name: 'list_services', args: {} }] }
            : { kind: 'text', text: 'all good' },
        );
      },
    };
    const play = new Play(agentic, () => '[]', agent);
    const first = await play.turn();
    expect(first.end).toEqual({
      kind: 'calls',
      calls: [{ id: 'rb.triage@c1', name: 'list_services', args: {} }],
    });
    const end = await play.turn();
    expect(end.end).toEqual({ kind: 'completed', state: { summary: 'all good' } });
    // The agent saw its own call ID, not the runbook's.
    expect(seen[1][1]).toEqual({
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'c1', name: 'list_services', args: {} }],
    });
  });

  it.each([
    ['Tool execution was denied by the user. Reason: no', 'refused'],
    ['Tool execution was denied: the approval request expired before anyone decided.', 'refused'],
    ['Tool "x" failed: boom', 'failed'],
    ['Tool "delete_volume" must be done by a person: it is manual-only', 'manual'],
    [
      'Tool "restart_service" was not run: the approver (carol) responded instead of approving. This is their response, not the tool\'s output: canary first',
      'refused',
    ],
    ['{"ok":true}', 'executed'],
  ])('reads "%s" as %s', (content, expected) => {
    expect(classifyResult(content)).toBe(expected);
  });

  // Validation refuses these names (runbook-library.spec.ts); the interpreter must not depend on it: built here without
  // validation, each definition fails its run with what is wrong, and never reaches a property of Object.prototype.
  describe('a definition that skipped validation', () => {
    const unchecked = (nodes: Record<string, unknown>, entry = 'a') =>
      ({
        name: 'unchecked',
        description: '',
        agent: 'ops',
        entry,
        state: { service: { type: 'string', default: 'web' } },
        nodes,
      }) as unknown as RunbookDefinition;
    const walk = (
      definition: RunbookDefinition,
      input: Record<string, unknown> = {},
      messages?: ChatMessage[],
    ) =>
      new RunbookWalk(() => undefined, messages ?? [{ role: 'user', content: '{}' }], noAgents).walk(
        definition,
        input,
      );

    it.each([
      ['an entry named constructor', unchecked({}, 'constructor'), 'no node "constructor"'],
      [
        'a branch to toString',
        unchecked({
          a: { kind: 'branch', when: { path: 'state.service', exists: true }, then: 'toString', else: 'a' },
        }),
        'no node "toString"',
      ],
    ])('fails %s with a clear reason', async (_what, definition, reason) => {
      const { end } = await walk(definition);
      expect(end).toEqual({ kind: 'failed', reason: expect.stringContaining(reason) });
    });

    it('refuses a starting state that names a built-in property: no such channel', async () => {
      const { end } = await walk(unchecked({ a: { kind: 'tool', tool: 'list_services', args: {} } }), {
        constructor: 'x',
      });
      expect(end).toEqual({
        kind: 'failed',
        reason: expect.stringContaining('has no state channel "constructor"'),
      });
    });

    it('fails a write into a built-in property, naming the node and field', async () => {
      const definition = unchecked({
        a: { kind: 'tool', tool: 'list_services', args: {}, write: 'toString' },
      });
      const asked: ChatMessage[] = [
        { role: 'user', content: '{}' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'rb.a@1', name: 'list_services', args: {} }] },
        { role: 'tool', toolCallId: 'rb.a@1', name: 'list_services', content: '[]' },
      ];
      const { end } = await walk(definition, {}, asked);
      expect(end).toEqual({
        kind: 'failed',
        reason: 'runbook unchecked: node "a": field "write": state channel "toString" is not declared',
      });
    });

    it('makes the model answer a failed run at once (no retry), as the attacker’s next: constructor did not', async () => {
      const definition = unchecked({
        a: { kind: 'tool', tool: 'list_services', args: {}, next: 'constructor' },
      });
      const model = new RunbookModel(definition, () => undefined, noAgents);
      const reply = await model.next({
        systemPrompt: '',
        messages: [
          { role: 'user', content: '{}' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: 'rb.a@1', name: 'list_services', args: {} }],
          },
          { role: 'tool', toolCallId: 'rb.a@1', name: 'list_services', content: '[]' },
        ],
        tools: [],
      });
      expect(reply).toMatchObject({
        kind: 'text',
        failed: true,
        text: 'Runbook unchecked failed: runbook unchecked: no node "constructor"',
      });
    });
  });

  it("hands an agent step's model error on (the job is retried), never failing the run for it", async () => {
    const agentic = parse({
      name: 'agentic',
      agent: 'ops',
      entry: 'triage',
      nodes: { triage: { kind: 'agent', agent: 'ops', prompt: 'look' } },
    });
    const down: AgentStepRunner = {
      tools: () => [],
      next: () => Promise.reject(new Error('provider unavailable')),
    };
    await expect(new Play(agentic, () => '[]', down).turn()).rejects.toThrow('provider unavailable');
  });
});
