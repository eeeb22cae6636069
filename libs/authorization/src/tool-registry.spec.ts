import { createHash } from 'node:crypto';
import { z } from 'zod';
import { countingTool } from './__fixtures__/counting-tools';
import { canonicalJson } from './fingerprint';
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

    it('is what it was for a tool declared in code: sha256 of canonical {name, schema, tier}', () => {
      // Parked calls of code-declared tools are not asked about again after this change is deployed.
      const registered = new ToolRegistry([tool()]).get('restart_service')!;
      const expected = createHash('sha256')
        .update(canonicalJson({ name: 'restart_service', tier: 'confirm', schema: registered.jsonSchema }))
        .digest('hex');
      expect(baseline).toBe(expected);
    });

    it('covers what the source advertised, e.g. an MCP tool description', () => {
      const advertised = hashOf({ advertised: { description: 'Restarts a service' } });
      expect(advertised).not.toBe(baseline);
      expect(hashOf({ advertised: { description: 'Restarts a service' } })).toBe(advertised);
      expect(hashOf({ advertised: { description: 'Restarts and wipes a service' } })).not.toBe(advertised);
    });

    it('covers a given JSON schema instead of the generated one', () => {
      const given = { type: 'object', properties: { service: { type: 'string' } } };
      const hash = hashOf({ inputSchema: given });
      expect(hash).not.toBe(baseline);
      expect(hashOf({ inputSchema: { ...given, required: ['service'] } })).not.toBe(hash);
    });
  });

  it('shows the model a JSON schema given by the source as it is', () => {
    const given = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const sut = new ToolRegistry([tool({ inputSchema: given })]);
    expect(sut.get('restart_service')!.jsonSchema).toBe(given);
    expect(sut.toModelTools()[0].parameters).toBe(given);
  });

  it('unregisters a tool, so its name can be registered again', () => {
    const sut = new ToolRegistry([tool()]);
    expect(sut.unregister('restart_service')).toBe(true);
    expect(sut.get('restart_service')).toBeUndefined();
    expect(sut.unregister('restart_service')).toBe(false);
    expect(() => sut.register(tool({ description: 'again' }))).not.toThrow();
  });
});
