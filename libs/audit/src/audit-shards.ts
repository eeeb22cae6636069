// The audit log over several streams (AUDIT_SHARDS): each writer's chain lives in one stream, the stream of the
// chain's ID, so a chain's links, its head and its checkpoint link stay in one hash tag (one master on a Redis
// Cluster). Reading, verifying and trimming go over every stream; these merge what each stream answered.
import type { AuditVerification } from '@countersign/contracts';
import type { AuditPage } from './audit-page-reader';
import type { TrimResult } from './audit-retention';
import { compareStreamIds } from './stream-id';

/**
 * One page over several streams, each read with the same query. Stream IDs are Redis time, so they order entries
 * across streams too (as far as the masters' clocks agree). The page is the newest `limit` of all, cut at the
 * newest point some stream did not read past (its `next`): below that point a stream may hold entries not read yet,
 * so the next page, from that point, reads every stream again.
 */
export function mergeAuditPages(pages: AuditPage[], limit: number): AuditPage {
  const newestFirst = pages.flatMap((page) => page.entries).sort((a, b) => compareStreamIds(b.id, a.id));
  let cut: string | undefined;
  for (const page of pages)
    if (page.next !== undefined && (cut === undefined || compareStreamIds(page.next, cut) > 0))
      cut = page.next;
  if (newestFirst.length > limit) {
    const boundary = newestFirst[limit - 1].id;
    // Streams can hold one entry each under the same ID, and a cursor cannot split them: when the entry past the
    // limit shares the boundary's ID, the page stops above that ID (unless nothing is above it: then it keeps the
    // tie, at most one entry per stream over the limit).
    const tied = compareStreamIds(newestFirst[limit].id, boundary) === 0;
    const above = newestFirst.slice(0, limit).filter((e) => compareStreamIds(e.id, boundary) > 0);
    const oldestKept = tied && above.length > 0 ? above[above.length - 1].id : boundary;
    if (cut === undefined || compareStreamIds(oldestKept, cut) > 0) cut = oldestKept;
  }
  const kept = cut === undefined ? newestFirst : newestFirst.filter((e) => compareStreamIds(e.id, cut!) >= 0);
  return { entries: kept.reverse(), ...(cut === undefined ? {} : { next: cut }) };
}

/** Intact when every stream is; counts summed; the first break found, in stream order of the shards. */
export function mergeVerifications(checks: AuditVerification[]): AuditVerification {
  if (checks.length === 1) return checks[0];
  const broken = checks.find((check) => !check.intact);
  const checkpoints = checks.flatMap((check) => (check.checkpoint ? [check.checkpoint] : []));
  const newest = checkpoints.reduce<(typeof checkpoints)[number] | undefined>(
    (best, c) => (best === undefined || compareStreamIds(c.upTo, best.upTo) > 0 ? c : best),
    undefined,
  );
  return {
    intact: broken === undefined,
    entries: checks.reduce((sum, check) => sum + check.entries, 0),
    chains: checks.reduce((sum, check) => sum + check.chains, 0),
    keys: [...new Set(checks.flatMap((check) => check.keys))].sort(),
    // One figure for all streams: trimmed entries summed; `upTo` and `at` of the newest checkpoint.
    ...(newest
      ? {
          checkpoint: {
            upTo: newest.upTo,
            at: newest.at,
            trimmed: checkpoints.reduce((sum, c) => sum + c.trimmed, 0),
          },
        }
      : {}),
    ...(broken?.brokenAt ? { brokenAt: broken.brokenAt } : {}),
  };
}

/** Refused when any stream refused (its place and reason), else busy when any was busy; trimmed entries summed. */
export function mergeTrims(results: TrimResult[]): TrimResult {
  if (results.length === 1) return results[0];
  const trimmed = results.reduce((sum, result) => sum + result.trimmed, 0);
  const refused = results.find((result) => result.status === 'refused');
  if (refused) return { ...refused, trimmed };
  if (results.some((result) => result.status === 'busy')) return { status: 'busy', trimmed };
  return { status: 'trimmed', trimmed, more: results.some((r) => r.status === 'trimmed' && r.more) };
}
