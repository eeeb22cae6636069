// One-time inbox sign-in codes: `POST /inbox/sign-in-links` (or `npx countersign inbox-link`) hands a signed-in API
// caller a link that opens the inbox in a browser without a long-lived token in any address. A code works once (GETDEL)
// and for a few minutes; only its hash is stored.
import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalKeys } from '../core/approval-keys';
import { APPROVAL_KEYS } from '../core/tokens';
import { RedisConnections } from '@countersign/platform';

export const SIGN_IN_CODE_TTL_MS = 5 * 60_000;

/** 32 random bytes, base64url. */
const CODE = /^[A-Za-z0-9_-]{43}$/;
const hash = (code: string) => createHash('sha256').update(code, 'utf8').digest('hex');

@Injectable()
export class SignInCodes {
  constructor(
    @Inject(APPROVAL_KEYS) private readonly keys: ApprovalKeys,
    private readonly redis: RedisConnections,
  ) {}

  async issue(principalId: string): Promise<{ code: string; expiresAt: number }> {
    const code = randomBytes(32).toString('base64url');
    await this.redis.commands.set(this.keys.signInCode(hash(code)), principalId, 'PX', SIGN_IN_CODE_TTL_MS);
    return { code, expiresAt: Date.now() + SIGN_IN_CODE_TTL_MS };
  }

  /** Whose the code is, without spending it (the link's landing page names them); undefined when it does not work. */
  async whose(code: string): Promise<string | undefined> {
    if (!CODE.test(code)) return undefined;
    return (await this.redis.commands.get(this.keys.signInCode(hash(code)))) ?? undefined;
  }

  /** The principal the code signs in, once; undefined for an unknown, used or expired code. */
  async redeem(code: string): Promise<string | undefined> {
    if (!CODE.test(code)) return undefined;
    return (await this.redis.commands.getdel(this.keys.signInCode(hash(code)))) ?? undefined;
  }
}
