// The inbox's sign-in form and its CSRF defence: a fresh token in an HttpOnly, SameSite=Strict cookie and in the form
// (double submit), and a post from anywhere but this service refused (Origin, Sec-Fetch-Site).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ForbiddenException } from '@nestjs/common';
import { readCookie } from '../../auth/approver-auth';
import { sendPage } from '../../core/html';
import type { HttpRequest as Request, HttpResponse as Response } from '../../core/http-types';
import { signInPage } from './inbox-page';

const CSRF_COOKIE = 'countersign_csrf';
const CSRF_TTL_MS = 3_600_000;

/** The sign-in page, with `problem` said above the form. */
export function showSignIn(res: Response, status: number, problem?: string): void {
  sendPage(res, status, signInPage(newCsrf(res), problem));
}

/** A fresh CSRF token: in an HttpOnly, SameSite=Strict cookie, and in the form the page carries (double submit). */
export function newCsrf(res: Response): string {
  const csrf = randomBytes(24).toString('base64url');
  res.cookie(CSRF_COOKIE, csrf, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/inbox',
    maxAge: CSRF_TTL_MS,
  });
  return csrf;
}

/**
 * A browser says where a post comes from (Origin, Sec-Fetch-Site): anything but this service (`publicUrl`, or the
 * host it was reached at) is refused. A client that says nothing must still show the CSRF token of a sign-in page
 * this service gave it.
 */
export function assertSameSite(req: Request, csrf: string, publicUrl: string): void {
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin')
    throw new ForbiddenException(`sign-in refused: a ${site} request may not sign anyone in`);
  const origin = header(req, 'origin');
  if (origin !== undefined && !ownOrigins(req, publicUrl).includes(origin))
    throw new ForbiddenException(`sign-in refused: origin ${origin} is not this service`);
  const cookie = readCookie(req, CSRF_COOKIE);
  if (!cookie || !sameText(cookie, csrf))
    throw new ForbiddenException(
      'sign-in refused: the form is not one this service gave out (reload the page)',
    );
}

function ownOrigins(req: Request, publicUrl: string): string[] {
  const origins = [new URL(publicUrl).origin];
  const host = header(req, 'host');
  if (host) origins.push(`${req.secure ? 'https' : 'http'}://${host}`);
  return origins;
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
