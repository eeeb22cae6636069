import type { z } from 'zod';

/** Thrown when a message or body fails its schema; the message names every offending field. */
export class ContractValidationError extends Error {
  constructor(
    readonly what: string,
    readonly issues: { path: string; message: string }[],
  ) {
    super(`invalid ${what}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.name = this.constructor.name;
  }
}

/** Dotted path of a zod issue; the root is shown as "(root)". */
export function issuePath(path: PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map(String).join('.');
}

export function describeZodError(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: issuePath(i.path), message: i.message }));
}

/** Parse or throw a ContractValidationError naming the fields. */
export function parseContract<S extends z.ZodType>(schema: S, data: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new ContractValidationError(what, describeZodError(parsed.error));
  return parsed.data;
}
