import { z } from 'zod';
import { countingTool } from './__fixtures__/counting-tools';
import { defineTool } from './tool';
import { ToolRegistry } from './tool-registry';

const tool = (overrides: Partial<Parameters<typeof defineTool>[0]> = {}) =>
  defineTool({
    name: 'restart_service',
    description: 'Restarts a service',
    args: z.object({ service: z.string().describe('service name'), force: z.boolean().optional() }),
    tier: 'confirm',
    handler: () => 'ok',
    ...overrides,
  });

describe('ToolRegistry', () => {
  it('generates the JSON schema the model sees from the zod schema', () => {
    const sut = new ToolRegistry([tool()]);
    expect(sut.get('restart_service')!.jsonSchema).toMatchObject({
      type: 'object',
      properties: { service: { type: 'string', description: 'service name' }, force: { type: 'boolean' } },
      required: ['service'],
    });
  });

  it('shows the model the input side of the schema: a field with a default is optional', () => {
    const sut = new ToolRegistry([
      tool({ args: z.object({ service: z.string(), force: z.boolean().default(false) }) }),
    ]);
    expect(sut.get('restart_service')!.jsonSchema).toMatchObject({
      properties: { force: { type: 'boolean', default: false } },
      required: ['service'],
    });
  });

  it('registers a tool whose schema transforms its input, describing what it accepts', () => {
    const sut = new ToolRegistry([tool({ args: z.object({ n: z.number().transform((n) => String(n)) }) })]);
    expect(sut.get('restart_service')!.jsonSchema).toMatchObject({ properties: { n: { type: 'number' } } });
  });

  it('declares tools to the model in function-calling shape', () => {
    const sut = new ToolRegistry([tool()]);
    expect(sut.toModelTools()).toEqual([
      {
        name: 'restart_service',
        description: 'Restarts a service',
        parameters: sut.get('restart_service')!.jsonSchema,
      },
    ]);
  });

  it('defaults a tool without a tier to auto', () => {
    const sut = new ToolRegistry([tool({ tier: undefined })]);
    expect(sut.get('restart_service')!.tier).toBe('auto');
  });

  it('refuses a second tool with the same name', () => {
    const sut = new ToolRegistry([tool()]);
    expect(() => sut.register(tool())).toThrow(/restart_service.*already registered/);
  });

  it('returns undefined for an unregistered tool', () => {
    expect(new ToolRegistry([tool()]).get('drop_database')).toBeUndefined();
  });

  it('lists the registered names', () => {
    const sut = new ToolRegistry([tool(), countingTool('read_logs').definition]);
    expect(sut.names()).toEqual(['restart_service', 'read_logs']);
  });

  describe('definitionHash', () => {
    const hashOf = (overrides: Partial<Parameters<typeof defineTool>[0]>) =>
      new ToolRegistry([tool(overrides)]).get(overrides.name ?? 'restart_service')!.definitionHash;
    const baseline = hashOf({});

    it('is stable for the same definition', () => {
      expect(hashOf({})).toBe(baseline);
      expect(baseline).toMatch(/^[0-9a-f]{64}$/);
    });

    it('does not depend on the handler', () => {
      expect(hashOf({ handler: () => 'something else' })).toBe(baseline);
    });

    it.each([
      ['the tier changes', { tier: 'manual_only' as const }],
      ['the tool name changes', { name: 'stop_service' }],
      [
        'a field is added to the schema',
        { args: z.object({ service: z.string(), force: z.boolean(), n: z.number() }) },
      ],
      ['a field type changes', { args: z.object({ service: z.number(), force: z.boolean().optional() }) }],
      [
        'a field becomes required',
        { args: z.object({ service: z.string().describe('service name'), force: z.boolean() }) },
      ],
    ])('changes when %s', (_case, overrides) => {
      expect(hashOf(overrides)).not.toBe(baseline);
    });
  });
});
