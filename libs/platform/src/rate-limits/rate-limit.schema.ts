// How a rate limit is written in the environment: `<requests>/<window>` ("30/1m"), or `off`. Each service names
// its own variables (RATE_LIMIT_RUN_STARTS, RATE_LIMIT_DECISIONS_ADDRESS, …) with this schema.
import { z } from 'zod';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const FORM = /^(\d+)\/(\d+)(ms|s|m|h)$/;

/** At most `limit` requests per `windowMs`; `text` is how it was written ("30/1m"), for messages. */
export interface RateLimit {
  limit: number;
  windowMs: number;
  text: string;
}

/**
 * `"30/1m"` → { limit: 30, windowMs: 60000 }; `"off"` → undefined (no limit). `off` has to be written out: there is
 * no empty or zero form, so a production config cannot turn a limit off by leaving something blank.
 */
export const RateLimitSchema = z
  .string()
  .trim()
  .refine((text) => text === 'off' || FORM.test(text), {
    message: 'must be <requests>/<window> such as 30/1m, 600/1h or 5/10s, or off',
  })
  .transform((text): RateLimit | undefined => {
    if (text === 'off') return undefined;
    const [, limit, amount, unit] = FORM.exec(text)!;
    return { limit: Number(limit), windowMs: Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS], text };
  })
  .refine((limit) => limit === undefined || (limit.limit >= 1 && limit.windowMs >= 1_000), {
    message: 'must allow at least 1 request, over a window of at least 1s',
  });

/** A rate-limit variable with its default, written as in the environment (and parsed like a set value). */
export const rateLimitSetting = (fallback: string) => RateLimitSchema.prefault(fallback);

/**
 * Which proxies in front of the service may say who the client is (`X-Forwarded-For`), as Express's `trust proxy`:
 * a number of hops, or addresses/subnets (`loopback`, `10.0.0.0/8`, comma-separated). Unset, the source address is
 * the TCP peer: right without a proxy, and behind one every client shares the proxy's address (and its limit).
 * `true` (trust any X-Forwarded-For) is refused: every client could then pick the address it is counted under.
 */
export const TrustProxySchema = z
  .string()
  .trim()
  .refine((text) => !['true', 'all', '*'].includes(text.toLowerCase()), {
    message:
      'must name the proxies (a hop count, or addresses/subnets such as loopback,10.0.0.0/8), not trust every client',
  })
  .transform((text): number | string[] =>
    /^\d+$/.test(text) ? Number(text) : text.split(',').map((part) => part.trim()),
  )
  .refine((value) => typeof value === 'number' || value.every((part) => part.length > 0), {
    message: 'has an empty entry',
  });
export type TrustProxy = z.infer<typeof TrustProxySchema>;
