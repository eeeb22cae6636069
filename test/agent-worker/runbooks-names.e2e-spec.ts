// Names every JavaScript object has (`constructor`, `toString`, `__proto__`, …) in a runbook: refused on submission
// (POST /runbooks/validate) and at start-up (YAML and JSON files), with the runbook, node and field named; a state
// input of such a name is no state channel. And a stored run whose history the interpreter cannot read fails at once
// with a clear error, and GET /runs/:id still answers it (it answered 500 while the interpreter threw).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobIds, JobName, type RunView } from '@countersign/contracts';
import type { RunningAgentWorker } from '../../apps/agent-worker/src/bootstrap';
import { runKey } from '../../apps/agent-worker/src/runs/run-keys';
import { post, WorkerHarness } from '../support/agent-worker-harness';
import { writeConfig } from '../support/mcp-config';
import { bearer } from '../support/principals';
import { waitFor } from '../support/redis';

jest.setTimeout(30_000);

/** Own properties of Object.prototype, written out (not derived from the code under test). */
const BUILT_IN_NAMES = [
  'constructor',
  '__proto__',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
];

/**
 * A definition (as JSON text, so `"__proto__"` stays an own key as it does in a file or a request body) with NAME
 * in one place, and what the refusal must name.
 */
const PLACES: [place: string, json: string, names: string][] = [
  [
    'an edge (next)',
    '{"a": {"kind": "tool", "tool": "list_services", "next": "NAME"}}',
    'node "a": field "next"',
  ],
  [
    'a template',
    '{"a": {"kind": "tool", "tool": "restart_service", "args": {"service": "{{state.NAME}}"}}}',
    'node "a": field "args.service"',
  ],
  [
    'a node ID',
    '{"a": {"kind": "tool", "tool": "list_services", "next": "b"}, "b": {"kind": "tool", "tool": "list_services"}, "NAME": {"kind": "gate", "message": "go?"}}',
    'node "NAME"',
  ],
];

/** The definition around `nodes`, with one declared channel and NAME declared as a channel when `channel`. */
function definition(nodes: string, name: string, channel = false): unknown {
  const state = `{"service": {"type": "string", "default": "web"}${channel ? ', "NAME": {"type": "string"}' : ''}}`;
  const text = `{"name": "evil", "agent": "ops", "entry": "a", "state": ${state}, "nodes": ${nodes}}`;
  return JSON.parse(text.replaceAll('NAME', name)) as unknown;
}

describe('runbook names that every JavaScript object has', () => {
  const h = new WorkerHarness('runbook-names');
  let worker: RunningAgentWorker;

  beforeAll(async () => {
    worker = await h.startWorker({ RUNBOOKS_DIR: 'test/support/runbooks' });
  });
  afterAll(() => h.cleanup());

  const cases = BUILT_IN_NAMES.flatMap((name) =>
    PLACES.map(([place, json, names]) => [name, place, json, names.replace('NAME', name)] as const),
  );
  it.each(cases)(
    'POST /runbooks/validate refuses "%s" as %s, naming runbook, node and field',
    async (name, _place, json, names) => {
      const res = await post(`${worker.url}/runbooks/validate`, { definition: definition(json, name) });
      expect(res.status).toBe(400);
      const { message } = res.body as { message: string };
      expect(message).toContain(`runbook evil: ${names}`);
      expect(message).toContain(`"${name}" is a built-in property name`);
    },
  );

  it.each(BUILT_IN_NAMES)(
    'POST /runbooks/validate refuses "%s" as a state channel, naming it',
    async (name) => {
      const nodes = '{"a": {"kind": "tool", "tool": "list_services"}}';
      const res = await post(`${worker.url}/runbooks/validate`, {
        definition: definition(nodes, name, true),
      });
      expect(res.status).toBe(400);
      const { message } = res.body as { message: string };
      expect(message).toContain(`runbook evil: state channel "${name}"`);
      expect(message).toContain(`"${name}" is a built-in property name`);
    },
  );

  it('still accepts the same definition with plain names', async () => {
    const res = await post(`${worker.url}/runbooks/validate`, {
      definition: definition(PLACES[1][1], 'service'),
    });
    expect(res).toEqual({ status: 200, body: { valid: true, name: 'evil' } });
  });

  it.each([
    [
      'YAML',
      'next: constructor',
      'evil.yaml',
      [
        'name: evil',
        'agent: ops',
        'entry: a',
        'nodes:',
        '  a: { kind: tool, tool: list_services, next: constructor }',
      ],
      'runbook evil: node "a": field "next": "constructor" is a built-in property name',
    ],
    [
      'YAML',
      'a node __proto__',
      'evil.yaml',
      [
        'name: evil',
        'agent: ops',
        'entry: a',
        'nodes:',
        '  a: { kind: tool, tool: list_services }',
        '  __proto__: { kind: gate, message: go? }',
      ],
      'runbook evil: node "__proto__": "__proto__" is a built-in property name',
    ],
    [
      'YAML',
      'agent: constructor',
      'evil.yaml',
      ['name: evil', 'agent: constructor', 'entry: a', 'nodes:', '  a: { kind: tool, tool: list_services }'],
      'runbook evil: agent "constructor" is not in AGENTS_CONFIG',
    ],
    [
      'JSON',
      '{{state.toString}}',
      'evil.json',
      [
        '{"name": "evil", "agent": "ops", "entry": "a", "state": {"service": {"type": "string"}},',
        ' "nodes": {"a": {"kind": "tool", "tool": "restart_service", "args": {"service": "{{state.toString}}"}}}}',
      ],
      'runbook evil: node "a": field "args.service": template "{{state.toString}}": "toString" is a built-in property name',
    ],
    [
      'JSON',
      'a node __proto__',
      'evil.json',
      [
        '{"name": "evil", "agent": "ops", "entry": "a",',
        ' "nodes": {"a": {"kind": "tool", "tool": "list_services"}, "__proto__": {"kind": "gate", "message": "go?"}}}',
      ],
      'runbook evil: node "__proto__": "__proto__" is a built-in property name',
    ],
  ])(
    'refuses to start with a %s file with %s, naming runbook, node and field',
    async (_format, _what, file, lines, message) => {
      const dir = mkdtempSync(join(tmpdir(), 'runbook-names-'));
      writeFileSync(join(dir, file), lines.join('\n'));
      await expect(h.startWorker({ RUNBOOKS_DIR: dir })).rejects.toThrow(message);
    },
  );

  it.each(['toString', 'constructor', '__proto__'])(
    'refuses to start with an agents config whose user has the role "%s" that its roles do not define',
    async (role) => {
      // As JSON text, so "__proto__" stays an own key of `users.mallory`'s roles list as it would in a file.
      const config = JSON.parse(readFileSync('test/support/agents.json', 'utf8')) as {
        agents: { ops: { users: Record<string, string[]> } };
      };
      config.agents.ops.users.mallory = [role];
      await expect(h.startWorker({ AGENTS_CONFIG: writeConfig(config) })).rejects.toThrow(
        `agents.ops.users.mallory.0: role "${role}" is not defined in roles`,
      );
    },
  );

  it('refuses a runbook start whose input names a built-in property: no such state channel', async () => {
    const res = await post(`${worker.url}/runbooks/fanout/runs`, { input: { constructor: 'web' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('input.constructor');
    expect(JSON.stringify(res.body)).toContain('has no state channel \\"constructor\\"');
  });

  // Validation now keeps every built-in name out of a definition, so the broken run is written as a worker would have
  // checkpointed it: the `gated` runbook's gate asked and answered, the answer not text (a history the interpreter
  // cannot read). The start job then hands the queued run to the worker, as a redelivered job would.
  it('fails a run whose history the interpreter cannot read at its first attempt, and GET /runs/:id answers it', async () => {
    const runId = 'run-unreadable-history';
    const gate = { runbook: 'gated', node: 'gate', message: 'Delete volume scratch? It cannot be undone.' };
    await h.redis.hset(runKey(h.prefixes.keyPrefix, runId), {
      agent: 'runbook.gated',
      userId: 'alice',
      status: 'queued',
      messages: JSON.stringify([
        { role: 'user', content: '{}' },
        {
          role: 'assistant',
          content: null,
          toolCalls: [{ id: 'rb.gate@1', name: 'runbook_gate', args: gate }],
        },
        { role: 'tool', toolCallId: 'rb.gate@1', name: 'runbook_gate', content: 42 },
      ]),
    });
    const job = await h.runs.add(
      JobName.StartRun,
      { runId, agent: 'runbook.gated', userId: 'alice', input: '{}', scopes: [] },
      { jobId: jobIds.startRun(runId) },
    );

    const failed = await waitFor(async () => {
      const res = await fetch(`${worker.url}/runs/${runId}`, { headers: bearer('alice') });
      expect(res.status).toBe(200);
      const view = (await res.json()) as RunView;
      return view.status === 'failed' ? view : undefined;
    }, 'the run to fail');
    expect(failed.error).toContain('Runbook gated failed: runbook gated: node "gate": internal error');
    expect(failed.runbook?.name).toBe('gated');
    // A deterministic failure: the job ended with the run, not after every retry.
    const settled = await waitFor(async () => {
      const state = await h.runs.getJobState(job.id!);
      return state === 'completed' || state === 'failed' ? state : undefined;
    }, 'the start job to settle');
    expect(settled).toBe('completed');
    expect((await h.runs.getJob(job.id!))?.attemptsStarted).toBe(1);
  });
});
