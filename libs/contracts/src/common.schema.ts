import { z } from 'zod';

/** IDs travel in Redis keys and BullMQ job IDs, so they are short, printable and never contain ':'. */
export const IdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.@-]+$/, 'may contain only letters, digits and _ . @ -');

export const ToolNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-zA-Z0-9_-]+$/, 'may contain only letters, digits, _ and -');

export const TierSchema = z.enum(['auto', 'confirm', 'manual_only']);
export type Tier = z.infer<typeof TierSchema>;

/** Tool arguments: a JSON object. */
export const ToolArgsSchema = z.record(z.string(), z.unknown());
export type ToolArgs = z.infer<typeof ToolArgsSchema>;

/** Lowercase hex SHA-256. */
export const Sha256HexSchema = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256');

export const IsoDateSchema = z.iso.datetime();
