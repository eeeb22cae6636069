// How an audit entry is stored in the stream and read back, and how its chain names its writer and its key.
import type { AuditEntry } from '@countersign/contracts';
import canonicalize from 'canonicalize';
import { shardedHashTag } from '@countersign/platform';

export type AuditInput = Omit<
  AuditEntry,
  'id' | 'at' | 'chain' | 'prevHash' | 'hash' | 'service' | 'detail'
> & {
  detail?: Record<string, unknown>;
};

/** The keys of one audit stream: with one shard, `{<keyPrefix>:audit}…`; else each shard its own tag. */
export function auditKeys(keyPrefix: string, shard = 0, shards = 1) {
  // One hash tag for every key of a stream: the scripts touch them together (Redis Cluster).
  const tag = shardedHashTag(`{${keyPrefix}:audit}`, shard, shards);
  return { stream: `${tag}:stream`, heads: `${tag}:heads`, checkpoint: `${tag}:checkpoint` };
}
export type AuditKeys = ReturnType<typeof auditKeys>;

/**
 * An entry as stored and linked: RFC 8785 canonical JSON (the `canonicalize` package, as the policy library's
 * fingerprints use), undefined fields left out. Any change to this output changes every entry's link.
 */
export function auditEntryJson(entry: object): string {
  const json = canonicalize(stripUndefined(entry));
  if (json === undefined) throw new TypeError('audit entry has no JSON form');
  return json;
}

/** A chain ID: `<service>:<8 hex, new per chain>:<the key ID of the secret that links it>`. */
const CHAIN_ID = /^[^\n]+:[0-9a-f]{8}:([0-9a-f]{8})$/;

export function chainId(service: string, random: string, keyId: string): string {
  return `${service}:${random}:${keyId}`;
}

/** The key ID a chain ID names; undefined for a chain of the unkeyed log (`<service>:<8 hex>`) or a forged one. */
export function chainKeyId(chain: string): string | undefined {
  return CHAIN_ID.exec(chain)?.[1];
}

/** A stream entry's fields. */
export interface StoredEntry {
  id: string;
  chain?: string;
  entry?: string;
  hash?: string;
}

export function storedEntry(id: string, fields: string[]): StoredEntry {
  const stored: StoredEntry = { id };
  for (let i = 0; i < fields.length; i += 2) {
    const name = fields[i];
    if (name === 'chain' || name === 'entry' || name === 'hash') stored[name] = fields[i + 1];
  }
  return stored;
}

/** The entry as `GET /audit` shows it; `prevHash` undefined when the reader did not get to the entry before it. */
export function toEntry(stored: StoredEntry, prevHash: string | undefined): AuditEntry {
  const body = JSON.parse(stored.entry ?? '{}') as Omit<AuditEntry, 'id' | 'chain' | 'prevHash' | 'hash'>;
  return {
    ...body,
    // Stored once when the service acted in its own name.
    service: body.service ?? body.actor ?? '',
    id: stored.id,
    chain: stored.chain ?? '',
    ...(prevHash === undefined ? {} : { prevHash }),
    hash: stored.hash ?? '',
  };
}

function stripUndefined<T extends object>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
