// JSON over HTTP for the CLI and the demo: maps "no answer" and HTTP errors to CliErrors with exit codes.
import { CliError, ExitCode } from '../cli-error';

export interface HttpAnswer<T> {
  status: number;
  body: T;
  /** The `Link` header, when the answer has one (a paged list). */
  link?: string;
}

/** Calls `url`; throws CliError(Unreachable) when nothing answers. Returns any HTTP status. */
export async function requestJson<T = unknown>(
  service: string,
  url: string,
  init: { method?: string; token?: string; body?: unknown } = {},
): Promise<HttpAnswer<T>> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: {
        accept: 'application/json',
        // Provenance for the audit log (decisions are recorded with channel "cli"); not a credential.
        'x-countersign-client': 'cli',
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch (error) {
    throw unreachable(service, url, error);
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text, errorMessage() shows it
  }
  return { status: response.status, body: body as T, link: response.headers.get('link') ?? undefined };
}

export function unreachable(service: string, url: string, error: unknown): CliError {
  const origin = safeOrigin(url);
  const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
  return new CliError(
    `cannot reach the ${service} at ${origin} (${cause}); is it running? Set its URL with the flag or environment variable shown in --help`,
    ExitCode.Unreachable,
  );
}

/** The `message` of a Nest error body, or the text itself. */
export function errorMessage(body: unknown): string {
  if (body && typeof body === 'object' && 'message' in body) {
    const message = (body as { message: unknown }).message;
    return Array.isArray(message) ? message.join('; ') : String(message);
  }
  return typeof body === 'string' && body ? body.slice(0, 300) : 'no details';
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
