// A plain HTTP tool: one request to an internal API, declared in config (method, URL template, JSON schema of the
// arguments, headers with secret references, timeout), governed like any other tool.
import type { ToolDefinition } from '@countersign/authorization';
import { jsonSchemaArgs, UnusableSchemaError } from './json-schema-args';
import { type ProviderDeps, ToolReportedError } from './mcp-tool-provider';
import { ProviderCallError } from './mcp-connection';
import { templatePreview } from './preview-template';
import type { HttpToolConfig } from './provider-config.schema';
import { capText } from './result-text';

export class InvalidToolConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

const PLACEHOLDER = /\{([A-Za-z0-9_]+)\}/g;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Builds the tool; throws InvalidToolConfigError naming what is wrong (the service then refuses to start). */
export function httpTool(name: string, config: HttpToolConfig, deps: ProviderDeps): ToolDefinition {
  const template = deps.secrets.plain(config.url);
  const placeholders = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]);
  checkTemplate(template, placeholders, config.args);
  let args;
  try {
    args = jsonSchemaArgs(config.args);
  } catch (error) {
    throw new InvalidToolConfigError(`args: ${(error as UnusableSchemaError).message}`);
  }
  return {
    name,
    description: config.description,
    args,
    inputSchema: config.args,
    // Where the request goes is part of what an approver approved: moving it (staging → production) asks again.
    advertised: { method: config.method, url: template, description: config.description },
    tier: config.tier,
    ...(config.preview ? { preview: templatePreview(config.preview) } : {}),
    ...(config.precondition ? { precondition: httpPrecondition(config, deps) } : {}),
    handler: (callArgs) => request(config, template, placeholders, callArgs as Record<string, unknown>, deps),
  };
}

/**
 * The tool's precondition: a GET of its own URL template (only its placeholders are sent), with the tool's headers,
 * whose answer must be JSON; anything else throws, and the call does not run (see evaluatePrecondition).
 */
function httpPrecondition(
  config: HttpToolConfig,
  deps: ProviderDeps,
): NonNullable<ToolDefinition['precondition']> {
  const { url, timeoutMs } = config.precondition!;
  const template = deps.secrets.plain(url);
  const placeholders = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]);
  try {
    checkTemplate(template, placeholders, config.args);
  } catch (error) {
    throw new InvalidToolConfigError(`precondition.${(error as Error).message}`);
  }
  const read: HttpToolConfig = { ...config, method: 'GET', timeoutMs };
  return {
    timeoutMs,
    check: async (callArgs) => {
      const text = await request(read, template, placeholders, callArgs as Record<string, unknown>, deps, {
        query: false,
      });
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new Error(`precondition: ${template} did not answer JSON`);
      }
    },
  };
}

function checkTemplate(template: string, placeholders: string[], schema: Record<string, unknown>): void {
  let url: URL;
  try {
    url = new URL(template.replace(PLACEHOLDER, 'x'));
  } catch {
    throw new InvalidToolConfigError(`url: "${template}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidToolConfigError(`url: must be http or https, not ${url.protocol}`);
  if (/\{[^}]*\}/.test(url.host)) throw new InvalidToolConfigError('url: the host may not be a placeholder');
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const name of placeholders) {
    const type = properties[name]?.type;
    if (!required.has(name) || !['string', 'integer', 'number'].includes(String(type)))
      throw new InvalidToolConfigError(
        `url: placeholder {${name}} must be a required string, integer or number argument in args`,
      );
  }
}

async function request(
  config: HttpToolConfig,
  template: string,
  placeholders: string[],
  args: Record<string, unknown>,
  deps: ProviderDeps,
  { query = true }: { query?: boolean } = {},
): Promise<string> {
  const { secrets } = deps;
  const url = new URL(
    template.replace(PLACEHOLDER, (_, key: string) => encodeURIComponent(String(args[key]))),
  );
  const rest = Object.entries(args).filter(([key]) => !placeholders.includes(key));
  const withBody = BODY_METHODS.has(config.method);
  if (!withBody && query) for (const [key, value] of rest) appendQuery(url, key, value);
  let headers: Record<string, string>;
  try {
    headers = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5', ...secrets.values(config.headers) };
  } catch (error) {
    throw new ProviderCallError(`${(error as Error).message}; nothing was sent.`, false);
  }
  if (withBody) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method: config.method,
      headers,
      body: withBody ? JSON.stringify(Object.fromEntries(rest)) : undefined,
      // A redirect would carry the secret headers to wherever it points: it is reported, never followed.
      redirect: 'manual',
      signal: AbortSignal.timeout(config.timeoutMs),
    });
  } catch (error) {
    throw requestFailure(error, url, config.timeoutMs, deps);
  }
  const body = await readBoundedText(response, config.maxResultBytes);
  const text = capText(secrets.scrub(body.text), config.maxResultBytes, body.complete);
  if (response.status >= 300 && response.status < 400)
    throw new ToolReportedError(
      `HTTP ${response.status}: redirects are not followed (Location: ${response.headers.get('location') ?? 'none'})`,
    );
  if (!response.ok) throw new ToolReportedError(`HTTP ${response.status}: ${text || response.statusText}`);
  return text || `HTTP ${response.status} (no body)`;
}

function appendQuery(url: URL, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) for (const item of value) appendQuery(url, key, item);
  else url.searchParams.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/**
 * The body's text, reading at most a little past `maxBytes` (the rest is never downloaded): `complete` false when it
 * was longer. For every body read from a server we do not control (HTTP tools, admission hooks).
 */
export async function readBoundedText(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; complete: boolean }> {
  if (!response.body) return { text: '', complete: true };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value));
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return { text: Buffer.concat(chunks).toString('utf8'), complete: false };
    }
  }
  return { text: Buffer.concat(chunks).toString('utf8'), complete: true };
}

function requestFailure(error: unknown, url: URL, timeoutMs: number, deps: ProviderDeps): ProviderCallError {
  const where = `${url.origin}${url.pathname}`;
  const name = (error as Error)?.name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return new ProviderCallError(
      `${where} did not answer within ${timeoutMs} ms; the request was abandoned and may or may not have been processed.`,
      true,
    );
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const detail = deps.secrets.scrub(cause?.message ?? (error as Error)?.message ?? String(error));
  if (cause?.code === 'ECONNREFUSED' || cause?.code === 'ENOTFOUND')
    return new ProviderCallError(`${where} is unreachable (${detail}); nothing was sent.`, false);
  return new ProviderCallError(
    `the request to ${where} failed (${detail}); it may or may not have been processed.`,
    true,
  );
}
