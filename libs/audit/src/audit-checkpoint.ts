// The retention checkpoint: what trimming removed from the audit stream, HMAC-signed, so verification starts each
// chain where its trimmed part ended, and a trimmed entry stays distinguishable from a deleted one.
import { z } from 'zod';
import canonicalize from 'canonicalize';
import { sameMac, type AuditKeyring, type AuditKey } from './audit-keyring';
import { STREAM_ID } from './stream-id';

const HexMacSchema = z.string().regex(/^[0-9a-f]{64}$/);

export const AuditCheckpointSchema = z
  .object({
    v: z.literal(1),
    /** The ID of the key that signed it. */
    key: z.string().regex(/^[0-9a-f]{8}$/),
    /** Every stream entry up to this ID, inclusive, was trimmed. */
    upTo: z.string().regex(STREAM_ID),
    /** When the checkpoint was written (ISO 8601). */
    at: z.string(),
    /** Entries trimmed since the log began. */
    trimmed: z.number().int().min(0),
    /**
     * The chains that go on after `upTo`: chain → the link of its last trimmed entry, which its next entry links to.
     * A chain trimmed whole (all of its entries past retention, so its writer had moved to a new chain) is not here:
     * it left the log together with its head.
     */
    chains: z.record(z.string(), HexMacSchema),
    /** HMAC of the canonical JSON of every other field, under the key `key` names. */
    mac: HexMacSchema,
  })
  .strict();
export type AuditCheckpoint = Omit<z.infer<typeof AuditCheckpointSchema>, 'mac'>;

export type CheckpointCheck = { ok: true; checkpoint: AuditCheckpoint } | { ok: false; reason: string };

/** The checkpoint as stored: its fields and their signature, one JSON string. */
export function signCheckpoint(checkpoint: Omit<AuditCheckpoint, 'key'>, key: AuditKey): string {
  const body = { ...checkpoint, key: key.id };
  return JSON.stringify({ ...body, mac: key.checkpointMac(canonicalJson(body)) });
}

/** Reads a stored checkpoint and checks its signature; a stored value that is not one this code wrote is refused. */
export function readCheckpoint(stored: string, keyring: AuditKeyring): CheckpointCheck {
  let json: unknown;
  try {
    json = JSON.parse(stored);
  } catch {
    return { ok: false, reason: 'the retention checkpoint is not JSON' };
  }
  const parsed = AuditCheckpointSchema.safeParse(json);
  if (!parsed.success)
    return { ok: false, reason: 'the retention checkpoint is not one this service writes' };
  const { mac, ...checkpoint } = parsed.data;
  const key = keyring.key(checkpoint.key);
  if (!key)
    return {
      ok: false,
      reason: `the retention checkpoint is signed with key ${checkpoint.key}, which is not configured (AUDIT_SIGNING_SECRET, AUDIT_SIGNING_PREVIOUS_SECRETS)`,
    };
  if (!sameMac(mac, key.checkpointMac(canonicalJson(checkpoint))))
    return {
      ok: false,
      reason: 'the retention checkpoint does not match its signature: it was changed or forged',
    };
  return { ok: true, checkpoint };
}

function canonicalJson(value: object): string {
  const json = canonicalize(value);
  if (json === undefined) throw new TypeError('checkpoint has no JSON form');
  return json;
}
