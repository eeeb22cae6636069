// The parts of Express's request and response this service uses (the project has no @types/express).
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface HttpRequest extends IncomingMessage {
  method: string;
  body?: unknown;
  /** Present because the app is created with `rawBody: true`. */
  rawBody?: Buffer;
  secure: boolean;
}

export interface CookieOptions {
  httpOnly?: boolean;
  sameSite?: 'strict' | 'lax' | 'none';
  secure?: boolean;
  path?: string;
  maxAge?: number;
}

export interface HttpResponse extends ServerResponse {
  status(code: number): this;
  set(headers: Record<string, string>): this;
  json(body: unknown): this;
  send(body: string): this;
  cookie(name: string, value: string, options: CookieOptions): this;
  redirect(status: number, url: string): void;
}
