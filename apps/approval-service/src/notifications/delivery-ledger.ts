// The notifications' delivery ledger: each Slack post and email of a call attempt is reserved in the request's hash
// before it is made and recorded after (lua/includes/reservation.lua), so a retry never makes it twice. The digest
// (DigestStore) keeps its deliveries the same way in its window, with the same record and release scripts.
import { randomBytes } from 'node:crypto';
import type { ApprovalStatus } from '@countersign/contracts';
import { LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';
import { RequestField } from '../requests/request-codec';

const SCRIPTS = {
  claim: LuaScript.load(__dirname, 'claim-delivery-1.lua'),
  record: LuaScript.load(__dirname, 'record-delivery-1.lua'),
  release: LuaScript.load(__dirname, 'release-delivery-1.lua'),
};

/** One delivery of a request: `key` names it within the request, e.g. `slack:#ops`, `email:bob`. */
export interface DeliveryRef {
  requestId: string;
  attempt: number;
  key: string;
}

/**
 * What claim found. `claimed`: deliver, then record (or release if it certainly did not happen). `delivered`: an
 * earlier try made it; `receipt` is what it recorded. `in_doubt`: an earlier try reserved it at `reservedAt` (ms) and
 * never recorded or released it, so it may or may not have happened. `not_due`: nothing to deliver (the request is
 * gone, replaced by a newer attempt, or not in a status the delivery is for).
 */
export type DeliveryClaim =
  | { status: 'claimed'; ref: DeliveryRef; reservation: string }
  | { status: 'delivered'; receipt: string }
  | { status: 'in_doubt'; reservedAt: number }
  | { status: 'not_due' };

export type ClaimedDelivery = Extract<DeliveryClaim, { status: 'claimed' }>;

/** What a delivery leaves to remember, recorded in the same step as the delivery itself. */
export interface DeliveryRecord {
  /** Given back by claim to a retry (e.g. where a Slack message landed). */
  receipt: string;
  /** A Slack message the outcome update edits. */
  slackMessage?: { channel: string; ts: string };
  /** An approver who was emailed the request (an expiry is emailed to them). */
  emailed?: string;
}

export class DeliveryLedger {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
  ) {}

  /**
   * Reserves a delivery unless an earlier try reserved or made it; a new reservation only while the request is in
   * one of `statuses` (atomically with the check, so a request settled meanwhile is not notified).
   */
  async claim(
    ref: DeliveryRef,
    statuses: readonly ApprovalStatus[],
    now = Date.now(),
  ): Promise<DeliveryClaim> {
    const reservation = newReservation(now);
    const reply = (await SCRIPTS.claim.run(
      this.redis,
      [this.keys.request(ref.requestId)],
      [ref.attempt, RequestField.delivery(ref.key), reservation, statuses.join(',')],
    )) as [number, string?];
    if (reply[0] === 1) return { status: 'claimed', ref, reservation };
    if (reply[0] === 0) return { status: 'not_due' };
    return heldBefore(String(reply[1]));
  }

  /** Records a claimed delivery; false when the reservation is gone (the attempt was replaced): nothing written. */
  record(claim: ClaimedDelivery, record: DeliveryRecord): Promise<boolean> {
    const also: string[] = [];
    if (record.slackMessage)
      also.push(RequestField.slackMessage(record.slackMessage.channel), record.slackMessage.ts);
    if (record.emailed) also.push(RequestField.emailed(record.emailed), '1');
    const field = RequestField.delivery(claim.ref.key);
    const key = this.keys.request(claim.ref.requestId);
    return recordReservation(this.redis, key, field, claim.reservation, record.receipt, also);
  }

  /** Gives up a claimed delivery that certainly did not happen, so a retry may make it. */
  release(claim: ClaimedDelivery): Promise<void> {
    const key = this.keys.request(claim.ref.requestId);
    return releaseReservation(this.redis, key, RequestField.delivery(claim.ref.key), claim.reservation);
  }

  /** An approver may have the request (a delivery in doubt): an expiry is emailed to them too. */
  async rememberEmailed(requestId: string, approver: string): Promise<void> {
    await this.redis.hset(this.keys.request(requestId), RequestField.emailed(approver), '1');
  }
}

/** A new reservation's value: when it was made (ms), and a nonce so that no two tries hold the same one. */
export function newReservation(now: number): string {
  return `reserved:${now}:${randomBytes(4).toString('hex')}`;
}

/** What an earlier try left in a delivery's field: its record, or a reservation it never finished. */
export function heldBefore(
  held: string,
): { status: 'delivered'; receipt: string } | { status: 'in_doubt'; reservedAt: number } {
  if (held.startsWith('delivered:')) return { status: 'delivered', receipt: held.slice('delivered:'.length) };
  return { status: 'in_doubt', reservedAt: Number(held.split(':')[1]) };
}

/** record-delivery-1.lua on any hash that holds a reservation (a request's, a digest window). */
export async function recordReservation(
  redis: RedisClient,
  key: string,
  field: string,
  reservation: string,
  receipt: string,
  also: string[] = [],
): Promise<boolean> {
  const reply = await SCRIPTS.record.run(redis, [key], [field, reservation, `delivered:${receipt}`, ...also]);
  return reply === 1;
}

/** release-delivery-1.lua on any hash that holds a reservation. */
export async function releaseReservation(
  redis: RedisClient,
  key: string,
  field: string,
  reservation: string,
): Promise<void> {
  await SCRIPTS.release.run(redis, [key], [field, reservation]);
}
