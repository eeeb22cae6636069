// The notification digest's state in Redis: per requester and window (NOTIFY_DIGEST_WINDOW), how many requests
// arrived, and how many of them each target (a Slack channel, an approver's email) was not sent one by one. A window
// is every request's of one requester, so it sits under the approval state's home tag; each call's answer is also
// kept on its own hash (in its shard), so a redelivered request or a retried escalation gets the answer it got first.
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';
import { RequestField } from '../requests/request-codec';
import {
  heldBefore,
  newReservation,
  recordReservation,
  releaseReservation,
  type DeliveryRecord,
} from './delivery-ledger';
import type { LedgerClaim, ReservationLedger } from './once-only-delivery';

const SCRIPTS = {
  answer: LuaScript.load(__dirname, 'notification-answer-1.lua'),
  countInWindow: LuaScript.load(__dirname, 'count-in-window-1.lua'),
  claim: LuaScript.load(__dirname, 'claim-digest-1.lua'),
};

/** When a call's notifications are sent: when it arrives, or when its escalation groups are added. */
export type NotifyPhase = 'request' | 'escalation';

/** Where a notification goes: `slack:<channel>` or `email:<approver>` (neither holds a comma). */
export type DigestTarget = `slack:${string}` | `email:${string}`;

/** `direct`: notify one by one. `digest`: counted in `windowStart`'s digest. `gone`: nothing to notify. */
export type Admission = { kind: 'direct' } | { kind: 'digest'; windowStart: number } | { kind: 'gone' };

type CountInWindowArgs = {
  call: string;
  window: string;
  after: number;
  targets: string;
  ttlMs: number;
};

/** A claimed digest: send one about `count` requests. */
export interface ClaimedDigest {
  target: DigestTarget;
  reservation: string;
  count: number;
}

export class DigestStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
    /** NOTIFY_DIGEST_WINDOW. */
    readonly windowMs: number,
    /** NOTIFY_DIGEST_AFTER: requests per requester and window notified one by one; undefined: no digest (off). */
    private readonly after: number | undefined,
    /** How long a window's state is kept after it ends: its digests are retried for a while. */
    private readonly keepMs = 86_400_000,
  ) {}

  get enabled(): boolean {
    return this.after !== undefined;
  }

  /** The window `now` falls in: windows are aligned to multiples of their length, so every replica agrees. */
  windowOf(now: number): number {
    return now - (now % this.windowMs);
  }

  async admit(
    call: {
      requestId: string;
      attempt: number;
      requester: string;
      phase: NotifyPhase;
      targets: DigestTarget[];
    },
    now = Date.now(),
  ): Promise<Admission> {
    if (this.after === undefined) return { kind: 'direct' };
    const windowStart = this.windowOf(now);
    const request = this.keys.request(call.requestId);
    const field = `notify:${call.attempt}:${call.phase}`;
    const attempt = String(call.attempt);
    const asked = (await SCRIPTS.answer.run(this.redis, [request], [attempt, field, ''])) as [
      number,
      string?,
    ];
    if (asked[0] !== 3) return admission(asked);
    // Counted once per call attempt and phase within the window. Should this process die before the answer is kept
    // on the call, a retry in the same window gets the window's answer; one in a later window is counted there too.
    const answer = (await SCRIPTS.countInWindow.run(
      this.redis,
      [this.keys.digestWindow(call.requester, windowStart)],
      [
        encodeScriptArgs<CountInWindowArgs>({
          call: `${call.requestId}:${attempt}:${call.phase}`,
          window: String(windowStart),
          after: this.after,
          targets: call.targets.join(','),
          ttlMs: windowStart + this.windowMs - now + this.keepMs,
        }),
      ],
    )) as string;
    return admission(
      (await SCRIPTS.answer.run(this.redis, [request], [attempt, field, answer])) as [number, string?],
    );
  }

  /** The reserve / record / release steps of one target's digest, for OnceOnlyDelivery. */
  ledger(requester: string, windowStart: number, target: DigestTarget, now = Date.now()) {
    const key = this.keys.digestWindow(requester, windowStart);
    // The field claim-digest-1.lua reserves: a delivery's field, as in a request's hash.
    const field = RequestField.delivery(target);
    const redis = this.redis;
    const ledger: ReservationLedger<ClaimedDigest> = {
      describe: { requester, window: new Date(windowStart).toISOString(), digest: target },
      async claim(): Promise<LedgerClaim<ClaimedDigest>> {
        const reservation = newReservation(now);
        const reply = (await SCRIPTS.claim.run(redis, [key], [target, reservation])) as [number, unknown?];
        if (reply[0] === 1)
          return { status: 'claimed', claimed: { target, reservation, count: Number(reply[1]) } };
        if (reply[0] === 0) return { status: 'not_due' };
        return heldBefore(String(reply[1]));
      },
      record: (claimed, record: DeliveryRecord) =>
        recordReservation(redis, key, field, claimed.reservation, record.receipt),
      release: (claimed) => releaseReservation(redis, key, field, claimed.reservation),
    };
    return ledger;
  }
}

/** What notification-answer-1.lua answered (never {3} when it was given an answer to store). */
function admission(reply: [number, string?]): Admission {
  if (reply[0] === 1) return { kind: 'direct' };
  if (reply[0] === 2) return { kind: 'digest', windowStart: Number(reply[1]) };
  return { kind: 'gone' };
}
