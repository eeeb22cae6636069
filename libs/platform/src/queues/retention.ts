// What each queue keeps: finished jobs and event stream entries. One rule each, read by the queue module's workers and by the bench's floors and
// peers (which must keep what the product keeps, or the comparison would measure a different retention). Free of
// imports, so a bare process can read it without loading the platform.

/**
 * The newest 10,000 finished jobs of each queue are kept, however old, so a re-published job ID (a decision, a request)
 * is deduplicated for at least as long as they stay. By count only: an age limit as well (it was an hour until
 * 2026-12-04) costs one more command per completion (BullMQ's `ZREVRANGEBYSCORE` in moveToFinished) and only ever
 * keeps fewer jobs; memory stays bounded by the count either way. Failed jobs are kept (removeOnFail unset): an
 * invalid message stays inspectable. Set on the workers, not per job: BullMQ stores options set per job in every
 * job's hash.
 */
export const REMOVE_ON_COMPLETE = { count: 10_000 } as const;

/**
 * Entries kept in each queue's event stream. BullMQ's scripts append to it on every add, fetch and completion
 * whatever this says (the `XADD`s are unconditional, so no command is saved); only `QueueEvents` reads it, and nothing
 * here does (the handlers learn of jobs from their workers). A small cap bounds its memory: `MAXLEN ~` trims whole
 * stream nodes (100 entries by default), so about 100 to 200 entries stay per queue instead of about 10,000. Each
 * Queue writes it into the queue's meta hash when it connects (the queue module's, the floors').
 */
export const QUEUE_EVENTS_MAX_LEN = 100;
