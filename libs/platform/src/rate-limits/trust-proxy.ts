// Which address a request comes from, for the per-address rate limits: Express's `req.ip`, which follows
// X-Forwarded-For only through the proxies TRUST_PROXY names.
import type { INestApplication } from '@nestjs/common';
import type { TrustProxy } from './rate-limit.schema';

export function applyTrustProxy(app: INestApplication, trust: TrustProxy | undefined): void {
  const express = app.getHttpAdapter().getInstance() as { set(name: string, value: unknown): void };
  express.set('trust proxy', trust ?? false);
}
