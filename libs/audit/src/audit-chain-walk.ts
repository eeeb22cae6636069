// Follows every writer's chain through the audit stream in stream order, checking each entry's link under the key its
// chain names. verify() walks the whole stream with it; retention walks what it is about to trim.
import { sameMac, type AuditKeyring } from './audit-keyring';
import { chainKeyId, type StoredEntry } from './audit-entry';

export class AuditChainWalk {
  /** Chain → its newest entry walked so far (stream ID, link). */
  readonly last = new Map<string, { id: string; hash: string }>();
  /** Key IDs the walked chains are linked under. */
  readonly keyIds = new Set<string>();

  constructor(
    private readonly keyring: AuditKeyring,
    /** Where chains trimmed before start (the checkpoint's `chains`); any other chain starts from "". */
    private readonly start: Readonly<Record<string, string>> = {},
  ) {}

  /** Checks the next entry of the stream; undefined when it links to the entry before it in its chain, else why not. */
  step({ id, chain, entry, hash }: StoredEntry): string | undefined {
    if (chain === undefined || entry === undefined || hash === undefined)
      return 'not an entry of a writer chain (no chain, entry or hash field)';
    const prev = this.last.get(chain)?.hash ?? this.start[chain] ?? '';
    // Later entries are checked against what is stored, so one edit is reported once, where it is.
    this.last.set(chain, { id, hash });
    const keyId = chainKeyId(chain);
    if (keyId === undefined)
      return `chain ${chain} names no signing key: written before the audit log was keyed, or forged`;
    const key = this.keyring.key(keyId);
    if (!key)
      return `chain ${chain} is signed with key ${keyId}, which is not configured (AUDIT_SIGNING_SECRET, AUDIT_SIGNING_PREVIOUS_SECRETS)`;
    this.keyIds.add(keyId);
    if (!sameMac(hash, key.entryMac(chain, prev, entry)))
      return `entry does not match its hash: it was changed, the entry before it in chain ${chain} is missing, or it was written without the key`;
    return undefined;
  }
}
