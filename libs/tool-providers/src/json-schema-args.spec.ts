import { jsonSchemaArgs, UnusableSchemaError } from './json-schema-args';

describe('jsonSchemaArgs', () => {
  const schema = {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1 },
      edits: {
        type: 'array',
        items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      },
    },
    required: ['path'],
    additionalProperties: false,
  };

  it('accepts valid arguments and returns them unchanged', () => {
    const args = { path: 'a', edits: [{ n: 1 }] };
    const parsed = jsonSchemaArgs(schema).safeParse(args);
    expect(parsed).toEqual({ success: true, data: args });
  });

  it('names each bad field, including a missing or an unexpected one', () => {
    const parsed = jsonSchemaArgs(schema).safeParse({ edits: [{ n: 'one' }], extra: 1 });
    expect(parsed.success).toBe(false);
    const issues = parsed.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues).toEqual(
      expect.arrayContaining([
        'path: is required',
        'extra: is not an accepted argument',
        'edits.0.n: must be integer',
      ]),
    );
  });

  it.each([
    ['draft-07', 'http://json-schema.org/draft-07/schema#'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema'],
    ['2020-12', 'https://json-schema.org/draft/2020-12/schema'],
    ['no $schema (2020-12)', undefined],
  ])('compiles a %s schema', (_case, dialect) => {
    const sut = jsonSchemaArgs({ ...schema, ...(dialect ? { $schema: dialect } : {}) });
    expect(sut.safeParse({ path: 3 }).success).toBe(false);
    expect(sut.safeParse({ path: 'x' }).success).toBe(true);
  });

  it.each([
    ['a schema that is not an object', { type: 'string' }],
    ['an unknown dialect', { type: 'object', $schema: 'http://example.com/my-dialect' }],
    ['a schema that does not compile', { type: 'object', properties: { a: { type: 'no-such-type' } } }],
  ])('refuses %s', (_case, bad) => {
    expect(() => jsonSchemaArgs(bad)).toThrow(UnusableSchemaError);
  });

  it('does not check formats (the server does); keeps the keyword for the model', () => {
    const sut = jsonSchemaArgs({ type: 'object', properties: { url: { type: 'string', format: 'uri' } } });
    expect(sut.safeParse({ url: 'not a uri' }).success).toBe(true);
  });
});
