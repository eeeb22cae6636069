import { InvalidRunbookError, parseRunbook, RunbookLibrary } from './runbook-library';

const valid = {
  name: 'payments-failover',
  agent: 'ops',
  entry: 'check',
  state: { service: { type: 'string', default: 'payments' } },
  nodes: {
    check: {
      kind: 'tool',
      tool: 'get_service_status',
      args: { service: '{{state.service}}' },
      next: 'restart',
    },
    restart: { kind: 'tool', tool: 'restart_service', args: { service: '{{state.service}}' } },
  },
};

function issuesOf(definition: unknown): string[] {
  try {
    RunbookLibrary.of([]).check(definition);
  } catch (error) {
    if (error instanceof InvalidRunbookError) return error.issues;
    throw error;
  }
  return [];
}

const withNodes = (nodes: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ...valid,
  ...extra,
  nodes: { ...valid.nodes, ...nodes },
});

describe('runbook definitions', () => {
  it('accepts a valid definition, in YAML as in JSON', () => {
    expect(issuesOf(valid)).toEqual([]);
    const yaml = [
      'name: small',
      'agent: ops',
      'entry: a',
      'nodes:',
      '  a: { kind: gate, message: go?, next: b }',
      '  b: { kind: tool, tool: list_services }',
    ].join('\n');
    expect(parseRunbook(yaml, 'small.yaml').nodes.a.kind).toBe('gate');
    expect(parseRunbook(JSON.stringify(valid), 'p.json').name).toBe('payments-failover');
  });

  it.each([
    [
      'a bad field of a node',
      withNodes({ restart: { kind: 'tool', tool: 'restart service' } }),
      'runbook payments-failover: node "restart": field "tool": may contain only',
    ],
    [
      'an unknown node kind',
      withNodes({ restart: { kind: 'teleport' } }),
      'runbook payments-failover: node "restart": field "kind"',
    ],
    [
      'an edge to no node',
      withNodes({ restart: { kind: 'tool', tool: 'restart_service', next: 'nowhere' } }),
      'runbook payments-failover: node "restart": field "next": no node "nowhere"',
    ],
    [
      'a missing entry',
      { ...valid, entry: 'start' },
      'runbook payments-failover: field "entry": no node "start"',
    ],
    [
      'an unreachable node',
      withNodes({ orphan: { kind: 'tool', tool: 'list_services' } }),
      'runbook payments-failover: node "orphan": unreachable from entry "check"',
    ],
    [
      'a cycle',
      withNodes({ restart: { kind: 'tool', tool: 'restart_service', args: {}, next: 'check' } }),
      'makes a cycle (check → restart → check)',
    ],
    [
      'a template of an undeclared channel',
      withNodes({ restart: { kind: 'tool', tool: 'restart_service', args: { service: '{{state.svc}}' } } }),
      'runbook payments-failover: node "restart": field "args.service": template names state channel "svc"',
    ],
    [
      'a template that is not a state path',
      withNodes({ restart: { kind: 'tool', tool: 'restart_service', args: { service: '{{process.env}}' } } }),
      'node "restart": field "args.service": template "{{process.env}}" must be a dotted path into the state',
    ],
    [
      'a write to an undeclared channel',
      withNodes({ restart: { kind: 'tool', tool: 'restart_service', write: 'out' } }),
      'node "restart": field "write": state channel "out" is not declared',
    ],
    [
      'a bad channel type',
      { ...valid, state: { service: { type: 'text' } } },
      'runbook payments-failover: state channel "service": field "type"',
    ],
    [
      'a sub-runbook that does not exist',
      withNodes({ restart: { kind: 'runbook', runbook: 'nope' } }),
      'runbook payments-failover: node "restart": field "runbook": no runbook "nope"',
    ],
    [
      'a parallel branch that runs into its join',
      {
        ...valid,
        entry: 'split',
        nodes: {
          split: { kind: 'parallel', branches: ['a', 'b'], next: 'join' },
          a: { kind: 'tool', tool: 'list_services', next: 'join' },
          b: { kind: 'tool', tool: 'list_services' },
          join: { kind: 'tool', tool: 'list_services' },
        },
      },
      'node "split": field "branches.0": branch "a" reaches the join "join"',
    ],
  ])('refuses %s, naming the node and field', (_, definition, expected) => {
    expect(issuesOf(definition).join('\n')).toContain(expected);
  });

  it('refuses sub-runbooks that call each other in a cycle', () => {
    const a = { ...valid, name: 'a', entry: 'x', nodes: { x: { kind: 'runbook', runbook: 'b' } } };
    const b = { ...valid, name: 'b', entry: 'y', nodes: { y: { kind: 'runbook', runbook: 'a' } } };
    const parse = (d: unknown) => parseRunbook(JSON.stringify(d), 'test');
    expect(() => RunbookLibrary.of([parse(a), parse(b)])).toThrow(
      'runbook a: node "x": field "runbook": sub-runbooks form a cycle (a → b → a)',
    );
  });

  it('refuses a file that is not YAML, naming it', () => {
    expect(() => parseRunbook('name: [unclosed', 'broken.yaml')).toThrow(
      'runbook file broken.yaml: cannot parse',
    );
  });

  it('loads RUNBOOKS_DIR at start-up, none without one, and refuses a directory that does not exist', () => {
    expect(RunbookLibrary.load('test/support/runbooks').names()).toContain('rollout');
    expect(RunbookLibrary.load(undefined).names()).toEqual([]);
    expect(() => RunbookLibrary.load('no/such/dir')).toThrow('RUNBOOKS_DIR: no/such/dir does not exist');
  });
});
