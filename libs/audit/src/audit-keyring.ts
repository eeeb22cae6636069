// The keys of the audit log: entries are linked by HMAC, so rewriting a chain takes AUDIT_SIGNING_SECRET, not only
// write access to Redis. The current secret signs; previous ones (rotation) are kept to verify what they signed.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '@countersign/platform';

/** Labels of the keys derived from one secret: an entry link is never valid as a checkpoint signature, or back. */
const DERIVED = {
  entry: 'countersign audit entry v1',
  checkpoint: 'countersign audit checkpoint v1',
  keyId: 'countersign audit key id v1',
} as const;

/** One secret's keys. The secret itself is not kept; the derived keys are in private fields (never logged). */
export class AuditKey {
  /** 8 hex characters naming the secret in chain IDs and checkpoints; says nothing about the secret. */
  readonly id: string;
  readonly #entryKey: Buffer;
  readonly #checkpointKey: Buffer;

  constructor(secret: string) {
    const derive = (label: string) => createHmac('sha256', secret).update(label).digest();
    this.#entryKey = derive(DERIVED.entry);
    this.#checkpointKey = derive(DERIVED.checkpoint);
    this.id = derive(DERIVED.keyId).toString('hex').slice(0, 8);
  }

  /**
   * An entry's link: HMAC-SHA256 over its chain ID, the previous entry's link ("" for a chain's first) and its
   * canonical JSON, separated by newlines (a chain ID never holds one; a link is hex), as lowercase hex.
   */
  entryMac(chain: string, prevHash: string, entryJson: string): string {
    return createHmac('sha256', this.#entryKey)
      .update(chain)
      .update('\n')
      .update(prevHash)
      .update('\n')
      .update(entryJson)
      .digest('hex');
  }

  /** The signature of a retention checkpoint (its canonical JSON without the signature). */
  checkpointMac(body: string): string {
    return createHmac('sha256', this.#checkpointKey).update(body).digest('hex');
  }
}

/** Compares two hex MACs in constant time (a stored value against a computed one). */
export function sameMac(stored: string, computed: string): boolean {
  const a = Buffer.from(stored, 'utf8');
  const b = Buffer.from(computed, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The current key (it signs new chains and checkpoints) and the previous ones (verification only). A chain names its
 * key in its ID, so a log holding chains of several secrets verifies as long as all of them are here.
 */
export class AuditKeyring {
  readonly current: AuditKey;
  private readonly byId = new Map<string, AuditKey>();

  constructor(currentSecret: string, previousSecrets: readonly string[] = []) {
    this.current = new AuditKey(currentSecret);
    this.byId.set(this.current.id, this.current);
    for (const secret of previousSecrets) {
      if (secret === currentSecret) continue;
      const key = new AuditKey(secret);
      // Two different secrets with one ID (1 in 4 billion): the ID would pick the wrong one. Refuse to start.
      if (this.byId.has(key.id))
        throw new ConfigError(
          `invalid configuration:\n  AUDIT_SIGNING_PREVIOUS_SECRETS: two secrets share the key ID ${key.id}; replace one`,
        );
      this.byId.set(key.id, key);
    }
  }

  static fromEnv(env: {
    AUDIT_SIGNING_SECRET: string;
    AUDIT_SIGNING_PREVIOUS_SECRETS?: readonly string[];
  }): AuditKeyring {
    return new AuditKeyring(env.AUDIT_SIGNING_SECRET, env.AUDIT_SIGNING_PREVIOUS_SECRETS ?? []);
  }

  /** The key with this ID, or undefined when its secret is not configured. */
  key(id: string): AuditKey | undefined {
    return this.byId.get(id);
  }

  /** Every key ID this keyring verifies, the current one first. */
  get ids(): string[] {
    return [...this.byId.keys()];
  }
}
