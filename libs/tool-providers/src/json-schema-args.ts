// A provider tool's arguments are checked against the JSON schema its provider advertised, with ajv, behind the
// interface the policy pipeline already calls for tools declared in code (a zod schema's `safeParse`), so both kinds
// of tool get the same error results, naming each bad field.
import Ajv, { type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import { z } from 'zod';

export class UnusableSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

// `strict: false`: servers' schemas carry keywords ajv does not know (`title` variants, vendor extensions); they are
// ignored, every standard keyword is checked. Formats (`uri`, `email`, ...) are not checked: the keyword is kept for
// the model, and the server checks its own input. No `useDefaults`/`removeAdditional`: the arguments an approver
// sees are exactly the ones sent.
const OPTIONS = { strict: false, allErrors: true, validateFormats: false } as const;
let validators: { draft7: Ajv; draft2019: Ajv2019; draft2020: Ajv2020 } | undefined;

function validatorFor(schema: Record<string, unknown>): Ajv | Ajv2019 | Ajv2020 {
  validators ??= {
    draft7: new Ajv(OPTIONS),
    draft2019: new Ajv2019(OPTIONS),
    draft2020: new Ajv2020(OPTIONS),
  };
  const dialect = schema.$schema;
  // MCP's current revision reads a schema without `$schema` as 2020-12.
  if (dialect === undefined || /json-schema\.org\/draft\/2020-12\/schema#?$/.test(String(dialect)))
    return validators.draft2020;
  if (/json-schema\.org\/draft\/2019-09\/schema#?$/.test(String(dialect))) return validators.draft2019;
  if (/json-schema\.org\/draft-0[67]\/schema#?$/.test(String(dialect))) return validators.draft7;
  throw new UnusableSchemaError(`its input schema's dialect ${JSON.stringify(dialect)} is not supported`);
}

/**
 * Compiles `schema` (an MCP tool's `inputSchema`, an HTTP tool's `args`) into a zod schema whose `safeParse` runs
 * ajv: the data is returned as given, each ajv error becomes an issue at its field's path. Throws
 * UnusableSchemaError when the schema cannot be compiled or does not describe an object: such a tool is not offered.
 */
export function jsonSchemaArgs(schema: Record<string, unknown>): z.ZodType<Record<string, unknown>> {
  if (schema.type !== 'object')
    throw new UnusableSchemaError('its input schema does not describe an object (type "object")');
  let validate: ValidateFunction;
  try {
    validate = validatorFor(schema).compile(schema as AnySchema);
  } catch (error) {
    if (error instanceof UnusableSchemaError) throw error;
    throw new UnusableSchemaError(`its input schema does not compile: ${(error as Error).message}`);
  }
  return z.custom<Record<string, unknown>>().superRefine((value, ctx) => {
    if (validate(value)) return;
    for (const issue of toIssues(validate.errors ?? [])) ctx.addIssue({ code: 'custom', ...issue });
  });
}

function toIssues(errors: ErrorObject[]): { path: (string | number)[]; message: string }[] {
  return errors.map((error) => {
    const path = error.instancePath
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
    // A missing or unexpected property is reported on its parent; name the field itself.
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    if (params.missingProperty !== undefined)
      return { path: [...path, params.missingProperty], message: 'is required' };
    if (params.additionalProperty !== undefined)
      return { path: [...path, params.additionalProperty], message: 'is not an accepted argument' };
    return { path, message: error.message ?? 'is invalid' };
  });
}
