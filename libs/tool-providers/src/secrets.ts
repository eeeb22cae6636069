// Secrets of tool providers (tokens in headers, keys in a server's environment) are named in config, never written
// there: `{"$secret": "NAME"}` is read when a call needs it, from the environment (NAME) or a file (NAME_FILE, as
// Docker and Kubernetes mount them). Resolved values never leave this module except towards the provider itself, and
// everything a provider says back is scrubbed of them before it can reach run state, logs or the audit.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const NAME = /^[A-Z_][A-Z0-9_]*$/;

export const SecretRefSchema = z
  .object({
    $secret: z.string().regex(NAME, 'must be an environment variable name (A-Z, 0-9, _)'),
    /** Written before the value, e.g. "Bearer ". */
    prefix: z.string().max(64).optional(),
  })
  .strict();
export type SecretRef = z.infer<typeof SecretRefSchema>;

/** A value that is not secret but differs per deployment (a URL): `{"$env": "NAME", "default"?: "..."}`. */
export const EnvRefSchema = z
  .object({
    $env: z.string().regex(NAME, 'must be an environment variable name (A-Z, 0-9, _)'),
    default: z.string().optional(),
  })
  .strict();
export type EnvRef = z.infer<typeof EnvRefSchema>;

/** A header or environment value: written out, or a secret reference. */
export const ConfigValueSchema = z.union([z.string(), SecretRefSchema]);
export type ConfigValue = z.infer<typeof ConfigValueSchema>;

/** A plain setting: written out, or read from the environment at start. */
export const PlainValueSchema = z.union([z.string(), EnvRefSchema]);
export type PlainValue = z.infer<typeof PlainValueSchema>;

export class MissingSecretError extends Error {
  constructor(readonly secret: string) {
    super(`secret ${secret} is not set (set ${secret}, or ${secret}_FILE to a file holding it)`);
    this.name = this.constructor.name;
  }
}

export class MissingSettingError extends Error {
  constructor(readonly variable: string) {
    super(`${variable} is not set and has no default`);
    this.name = this.constructor.name;
  }
}

/** Secrets shorter than this are not scrubbed from text (they would match everywhere); they are weak anyway. */
const MIN_SCRUBBED_LENGTH = 4;

/**
 * Reads secret and plain references from one environment map (given by the service's config module, never
 * process.env here), and remembers every secret value it handed out so that `scrub` can remove it from text.
 */
export class SecretSource {
  /** value → name, for every secret resolved so far (files can change: each value read is kept). */
  private readonly resolved = new Map<string, string>();

  constructor(private readonly env: Readonly<Record<string, string | undefined>>) {}

  /** The secret's value (with its prefix). Throws MissingSecretError naming it, never the value. */
  secret(ref: SecretRef): string {
    const name = ref.$secret;
    let value = this.env[name];
    const file = this.env[`${name}_FILE`];
    if (!value && file) {
      try {
        value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
      } catch {
        throw new MissingSecretError(name);
      }
    }
    if (!value) throw new MissingSecretError(name);
    if (value.length >= MIN_SCRUBBED_LENGTH) this.resolved.set(value, name);
    return (ref.prefix ?? '') + value;
  }

  /** A header or environment value as the provider must receive it. */
  value(value: ConfigValue): string {
    return typeof value === 'string' ? value : this.secret(value);
  }

  /** Every value of a map resolved (secrets read now). */
  values(values: Readonly<Record<string, ConfigValue>>): Record<string, string> {
    return Object.fromEntries(Object.entries(values).map(([key, v]) => [key, this.value(v)]));
  }

  /** A plain setting, read once at start. */
  plain(value: PlainValue): string {
    if (typeof value === 'string') return value;
    const found = this.env[value.$env] || value.default;
    if (found === undefined) throw new MissingSettingError(value.$env);
    return found;
  }

  /** Secret names a config refers to that cannot be read now (for a warning at start; calls fail closed later). */
  missing(values: Iterable<ConfigValue>): string[] {
    const names: string[] = [];
    for (const value of values) {
      if (typeof value === 'string') continue;
      try {
        this.secret(value);
      } catch {
        names.push(value.$secret);
      }
    }
    return names;
  }

  /** `text` with every secret value handed out so far replaced by `[secret NAME]`. */
  scrub(text: string): string {
    if (this.resolved.size === 0 || !text) return text;
    let out = text;
    for (const [value, name] of this.resolved) {
      if (out.includes(value)) out = out.split(value).join(`[secret ${name}]`);
    }
    return out;
  }
}

/** Environment variables a config's references read (`$secret` → NAME and NAME_FILE, `$env` → NAME), sorted. */
export function referencedVariables(config: unknown): string[] {
  const names = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    if (typeof record.$secret === 'string') names.add(record.$secret).add(`${record.$secret}_FILE`);
    if (typeof record.$env === 'string') names.add(record.$env);
    Object.values(record).forEach(visit);
  };
  visit(config);
  return [...names].sort();
}
