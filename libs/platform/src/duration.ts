// Durations in config files and variables ("90s", "30m", "2h"), as milliseconds: one format for every service.
import { z } from 'zod';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "250ms", "90s", "30m", "2h", "1d" → milliseconds. */
export const DurationSchema = z
  .string()
  .regex(/^\d+(ms|s|m|h|d)$/, 'must be a duration such as 90s, 30m or 2h')
  .transform((text) => {
    const [, amount, unit] = /^(\d+)(ms|s|m|h|d)$/.exec(text)!;
    return Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  })
  .refine((ms) => ms > 0, 'must be longer than zero');
