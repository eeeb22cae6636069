// Makes each Slack post and email of a call attempt (and each digest, see DigestStore) at most once, however often
// its job is retried: reserve (DeliveryLedger.claim), deliver, record (DeliveryLedger.record, with what later steps
// need). A retry that finds the record skips the delivery and only redoes the bookkeeping after it.
//
// The window between reserving and recording is at-most-once. A try that dies there (the process is killed) or
// loses the answer (a timeout, a dropped connection) cannot know whether Slack or the mail server took the
// message, and neither has an idempotency key to ask with; the retry that finds the bare reservation does not
// deliver again and reports the delivery in doubt. Why not at-least-once: a second Slack message keeps live
// buttons that no outcome update will edit (only one ts is known), and a second email is the duplicate this
// exists to prevent; a message lost in that window fails closed: the request stays decidable in the inbox and
// the API, is audited as notification.failed, and expires into a denial. The window is a few milliseconds
// unless the channel hangs. Only a refusal (NotDeliveredError) releases the reservation, so the retry delivers.
import type { ApprovalStatus } from '@countersign/contracts';
import type { Logger } from '@countersign/platform';
import type { ClaimedDelivery, DeliveryLedger, DeliveryRecord, DeliveryRef } from './delivery-ledger';
import { NotDeliveredError } from './delivery-errors';

/**
 * `delivered`: made now (`now`) or by an earlier try, whose `receipt` it gives back. `in_doubt`: an earlier try
 * reserved it at `reservedAt` (ms) and stopped before recording. `not_due`: nothing to deliver.
 */
export type DeliveryOutcome =
  | { status: 'delivered'; receipt: string; now: boolean }
  | { status: 'in_doubt'; reservedAt: number }
  | { status: 'not_due' };

/** Tries of the record after a delivery: only this process knows the receipt, so it is not given up lightly. */
const RECORD_TRIES = 5;

/**
 * Where deliveries of one kind are reserved, recorded and released: a call attempt's hash for its posts and emails
 * (DeliveryLedger), a requester's digest window for its digests (DigestStore). `C` is what a claim hands to send,
 * record and release (the reservation, and whatever the sender needs).
 */
export interface ReservationLedger<C> {
  /** Names the delivery in log lines. */
  readonly describe: Record<string, unknown>;
  claim(): Promise<LedgerClaim<C>>;
  /** false: the reservation is gone (its state was replaced): nothing written. */
  record(claimed: C, record: DeliveryRecord): Promise<boolean>;
  release(claimed: C): Promise<void>;
}

export type LedgerClaim<C> =
  | { status: 'claimed'; claimed: C }
  | { status: 'delivered'; receipt: string }
  | { status: 'in_doubt'; reservedAt: number }
  | { status: 'not_due' };

export class OnceOnlyDelivery {
  constructor(
    private readonly deliveries: DeliveryLedger,
    private readonly logger: Logger,
    /** Pause before the second try of a record; doubled before each further one. */
    private readonly recordRetryMs = 100,
  ) {}

  /**
   * Delivers with `send` unless an earlier try did (or may have); a new delivery only while the request is in one
   * of `statuses`. A failure of `send` is rethrown (so the job is retried), after releasing the reservation if it
   * was a NotDeliveredError.
   */
  deliver(
    ref: DeliveryRef,
    statuses: readonly ApprovalStatus[],
    send: () => Promise<DeliveryRecord>,
  ): Promise<DeliveryOutcome> {
    const deliveries = this.deliveries;
    const ledger: ReservationLedger<ClaimedDelivery> = {
      describe: { requestId: ref.requestId, delivery: ref.key },
      async claim() {
        const claim = await deliveries.claim(ref, statuses);
        return claim.status === 'claimed' ? { status: 'claimed', claimed: claim } : claim;
      },
      record: (claimed, record) => deliveries.record(claimed, record),
      release: (claimed) => deliveries.release(claimed),
    };
    return this.deliverVia(ledger, send);
  }

  /** The same, for a ledger of another kind: reserve, `send`, record (or release on a refusal). */
  async deliverVia<C>(
    ledger: ReservationLedger<C>,
    send: (claimed: C) => Promise<DeliveryRecord>,
  ): Promise<DeliveryOutcome> {
    const claim = await ledger.claim();
    if (claim.status === 'delivered') return { status: 'delivered', receipt: claim.receipt, now: false };
    if (claim.status !== 'claimed') return claim;
    let record: DeliveryRecord;
    try {
      record = await send(claim.claimed);
    } catch (error) {
      if (error instanceof NotDeliveredError) await ledger.release(claim.claimed);
      throw error;
    }
    await this.record(ledger, claim.claimed, record);
    return { status: 'delivered', receipt: record.receipt, now: true };
  }

  private async record<C>(ledger: ReservationLedger<C>, claimed: C, record: DeliveryRecord) {
    for (let tries = 1; ; tries++) {
      try {
        if (!(await ledger.record(claimed, record)))
          this.logger.warn(ledger.describe, 'delivered, but its reservation is gone: not recorded');
        return;
      } catch (error) {
        if (tries >= RECORD_TRIES) throw error;
        this.logger.warn(
          { ...ledger.describe, err: error, tries },
          'could not record a delivery; trying again',
        );
        await new Promise((resolve) => setTimeout(resolve, this.recordRetryMs * 2 ** (tries - 1)));
      }
    }
  }
}
