// Reads a JSON config given by an environment variable: inline JSON (starts with "{") or a file path. Errors name the
// variable, the file and every bad field, so a typo stops start-up with a message instead of a half-working service.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { describeZodError } from '@countersign/contracts';
import { ConfigError } from './base-config';

export function loadJsonConfig<S extends z.ZodType>(
  variable: string,
  source: string,
  schema: S,
): z.output<S> {
  const inline = source.trimStart().startsWith('{');
  const where = inline ? `${variable} (inline JSON)` : `${variable} (${resolve(source)})`;
  let text = source;
  if (!inline) {
    try {
      text = readFileSync(resolve(source), 'utf8');
    } catch (error) {
      throw new ConfigError(
        `invalid configuration:\n  ${variable}: cannot read ${source}: ${(error as Error).message}`,
      );
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`invalid configuration:\n  ${where}: not valid JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const lines = describeZodError(parsed.error).map((i) => `  ${variable} ${i.path}: ${i.message}`);
  throw new ConfigError(`invalid configuration in ${where}:\n${lines.join('\n')}`);
}
