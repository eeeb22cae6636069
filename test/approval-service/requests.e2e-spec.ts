// GET /approvals one page at a time (limit + cursor + Link header), against real Redis and a listening service.
// Each test starts from empty lists, so it can count exactly what a walk returns.
import { Redis } from 'ioredis';
import { encodeApprovalCursor, type ApprovalRequest, type ApprovalView } from '@countersign/contracts';
import { startApprovalService, type RunningApprovalService } from '../../apps/approval-service/src/bootstrap';
import { RequestStore } from '../../apps/approval-service/src/requests/request-store';
import { approvalRequest, AgentSideQueues, approvalServiceEnv } from '../support/approval-harness';
import { approvalsConfig, approvers, asApprover, group } from '../support/fixtures';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes, waitFor } from '../support/redis';

jest.setTimeout(30_000);

// Every test runs with one shard of the approval state and with three (APPROVAL_SHARDS): with three, each list is
// read from every shard and merged, and must page exactly as one list would.
describe.each([1, 3])('with %i approval shard(s)', (shards) => {
  const prefixes = uniquePrefixes(`paging-${shards}`);
  const APPROVALS = approvalsConfig({
    approvers: approvers('bob', 'carol', 'eve'),
    groups: [group('ops', ['bob', 'carol']), group('finance', ['eve'])],
    rules: [{ match: { tool: 'pay_invoice' }, groups: ['finance'], channels: ['web'] }],
    defaults: { channels: ['web'] },
  });

  let service: RunningApprovalService;
  let queues: AgentSideQueues;
  let redis: Redis;

  beforeAll(async () => {
    service = await startApprovalService(
      approvalServiceEnv(prefixes, APPROVALS, { APPROVAL_SHARDS: String(shards) }),
      {
        port: 0,
        host: '127.0.0.1',
      },
    );
    expect(store().keys.shards).toHaveLength(shards);
    queues = new AgentSideQueues(prefixes);
    redis = new Redis(TEST_REDIS_URL);
  });

  // Empty lists for every test; the hashes of earlier tests stay, unlisted.
  beforeEach(async () => {
    for (const { pending, notices, decided, expired } of store().keys.shards)
      await redis.del(pending, notices, decided, expired);
  });

  afterAll(async () => {
    await service?.close();
    await queues?.close();
    await redis?.quit();
    await deletePrefixedKeys(prefixes);
  });

  // ---- helpers -------------------------------------------------------------------------------------------

  const store = () => service.app.get(RequestStore);

  async function get(path: string, as = 'bob') {
    const res = await fetch(`${service.url}${path}`, { headers: asApprover(as) });
    return { status: res.status, link: res.headers.get('link'), json: JSON.parse(await res.text()) };
  }

  interface Walk {
    /** Request IDs of each page, in order (the lists hold request IDs). */
    pages: string[][];
    /** The Link header of each page (null on the last). */
    links: (string | null)[];
  }

  /** Follows `rel="next"` from `path` to the end; `between(n)` runs after page n (1-based) is read. */
  async function walk(path: string, between?: (page: number) => Promise<void>, as = 'bob'): Promise<Walk> {
    const result: Walk = { pages: [], links: [] };
    for (let next: string | undefined = path; next;) {
      const page = await get(next, as);
      expect(page.status).toBe(200);
      result.pages.push((page.json as ApprovalView[]).map((v) => v.request.requestId));
      result.links.push(page.link);
      next = page.link ? /^<(\/approvals\?[^>]+)>; rel="next"$/.exec(page.link)?.[1] : undefined;
      if (page.link) expect(next).toBeDefined(); // a Link header always has this form
      if (result.pages.length > 50) throw new Error('the walk does not end');
      await between?.(result.pages.length);
    }
    return result;
  }

  /** Submits requests one after the other (so they are created in this order), waits until each is listed; their IDs. */
  async function submit(count: number, over: Partial<ApprovalRequest> = {}): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const request = await queues.submit(approvalRequest({ args: { n: i }, ...over }));
      const as = over.toolName === 'pay_invoice' ? 'eve' : 'bob';
      await waitFor(async () => (await get(`/approvals/${request.callId}`, as)).status === 200, 'stored');
      ids.push(request.requestId);
    }
    return ids;
  }

  const approve = async (requestId: string) => {
    const res = await fetch(`${service.url}/approvals/${requestId}/decisions`, {
      method: 'POST',
      headers: { ...asApprover('bob'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(res.status).toBe(200);
  };

  /**
   * What Redis holds in a list, in its own order (score, then request ID byte by byte): with several shards, every
   * shard's list, sorted into that order here.
   */
  async function inRedis(status: 'pending' | 'decided'): Promise<string[]> {
    const entries: { id: string; score: number }[] = [];
    for (const shard of store().keys.shards) {
      const reply = await redis.zrange(shard[status], 0, -1, 'WITHSCORES');
      for (let i = 0; i < reply.length; i += 2) entries.push({ id: reply[i], score: Number(reply[i + 1]) });
    }
    return entries
      .sort((a, b) => a.score - b.score || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)))
      .map((e) => e.id);
  }

  /** Removes request IDs from a list, in whichever shard holds them. */
  const removeFromList = (status: 'pending', ...ids: string[]) =>
    Promise.all(store().keys.shards.map((shard) => redis.zrem(shard[status], ...ids)));

  /** Stores a request directly, created at `now` (the score of the pending list). */
  const storeAt = (now: number, callId: string) =>
    store().create({
      request: approvalRequest({ callId }),
      status: 'pending',
      groups: ['ops'],
      quorum: 1,
      channels: ['web'],
      now,
      expiresAt: Date.now() + 3_600_000,
    });

  // ---- tests ---------------------------------------------------------------------------------------------

  it('walks one list page by page in score order, every entry once, with no Link on the last page', async () => {
    const submitted = await submit(7);
    const ids = await inRedis('pending');
    expect([...ids].sort()).toEqual([...submitted].sort());

    const result = await walk('/approvals?status=pending&limit=3');
    expect(result.pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(result.pages.flat()).toEqual(ids);
    expect(result.links[0]).toMatch(
      /^<\/approvals\?status=pending&limit=3&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
    );
    expect(result.links[2]).toBeNull();

    // The default limit (100) takes everything at once.
    const all = await get('/approvals?status=pending');
    expect([all.json.length, all.link]).toEqual([7, null]);
  });

  it('walks the lists one after the other without a status: pending, then decided, each in score order', async () => {
    // Decided before the pending ones were even created: listed after them all the same (list order first).
    const first = await submit(3);
    for (const id of [first[1], first[0], first[2]]) await approve(id);
    await submit(4);
    const pending = await inRedis('pending');
    const decided = await inRedis('decided'); // by when each was decided
    expect([pending.length, [...decided].sort()]).toEqual([4, [...first].sort()]);

    const result = await walk('/approvals?limit=3');
    expect(result.pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(result.pages.flat()).toEqual([...pending, ...decided]);
    expect(result.links[0]).toMatch(/^<\/approvals\?limit=3&cursor=/);
    expect(result.links[2]).toBeNull();

    // A page that ends exactly with the last entry has no Link (no empty page after it).
    const exact = await walk('/approvals?status=decided&limit=3');
    expect(exact).toEqual({ pages: [decided], links: [null] });
  });

  it('keeps walking when entries are decided between pages, returning every entry that stayed exactly once', async () => {
    await submit(8);
    const ids = await inRedis('pending');
    const result = await walk('/approvals?status=pending&limit=3', async (page) => {
      if (page !== 1) return;
      await approve(ids[2]); // the cursor's own entry: the next page starts after where it was
      await approve(ids[4]); // not read yet: it left the list before its page
      await approve(ids[0]); // already returned
    });
    expect(result.pages[0]).toEqual(ids.slice(0, 3));
    expect(result.pages.slice(1).flat()).toEqual([ids[3], ids[5], ids[6], ids[7]]);
    expect(result.links.at(-1)).toBeNull();
  });

  it('returns a request created during the walk once, at the end of its list', async () => {
    await submit(4);
    const ids = await inRedis('pending');
    let late: string[] = [];
    const result = await walk('/approvals?status=pending&limit=2', async (page) => {
      if (page === 1) late = await submit(1);
    });
    expect(result.pages.flat()).toEqual([...ids, ...late]);
  });

  it('pages through entries of equal score in request ID order (byte by byte), also when the cursor entry is gone', async () => {
    const t = Date.now();
    // Byte order: '-' (45) < '.' (46) < digits < upper case < '_' (95) < lower case.
    const tied = ['tie-b', 'tie.a', 'tie_A', 'tie-B', 'tieZ', 'tie-a', 'tie9', 'tiea'];
    await storeAt(t - 1000, 'early');
    for (const id of tied) await storeAt(t, id);
    await storeAt(t + 1000, 'late');
    // Their request IDs are `rq-<call ID>` (approvalRequest): the same order.
    const expected = [
      'early',
      ...[...tied].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
      'late',
    ].map((id) => `rq-${id}`);
    expect(await inRedis('pending')).toEqual(expected);

    const result = await walk('/approvals?status=pending&limit=2', async (page) => {
      // The entry the cursor points at leaves the list (as if decided), and one tie not yet read too.
      if (page === 2) await removeFromList('pending', expected[3], expected[6]);
    });
    expect(result.pages.flat()).toEqual(expected.filter((id) => id !== expected[6]));
    expect(result.pages.map((p) => p.length)).toEqual([2, 2, 2, 2, 1]);
  });

  it('reads at most `limit` entries per page; requests of other groups are left out after reading', async () => {
    const mixed = [
      ...(await submit(2)),
      ...(await submit(3, { toolName: 'pay_invoice' })),
      ...(await submit(2)),
    ];
    expect(await inRedis('pending')).toHaveLength(7);
    const bob = await walk('/approvals?status=pending&limit=2');
    // Read: [ops, ops] [finance, finance] [finance, ops] [ops]. Page 2 is empty, and still says more follow.
    expect(bob.pages).toEqual([[mixed[0], mixed[1]], [], [mixed[5]], [mixed[6]]]);
    expect(bob.links.map(Boolean)).toEqual([true, true, true, false]);
    const eve = await walk('/approvals?status=pending&limit=2', undefined, 'eve');
    expect(eve.pages.flat()).toEqual(mixed.slice(2, 5));
  });

  it('removes from its list an entry whose hash aged out, and skips it', async () => {
    await submit(3);
    const ids = await inRedis('pending');
    await redis.del(store().keys.request(ids[1]));
    const result = await walk('/approvals?status=pending&limit=2');
    expect(result.pages).toEqual([[ids[0]], [ids[2]]]);
    expect(await inRedis('pending')).toEqual([ids[0], ids[2]]);
  });

  describe('answers 400 naming the field', () => {
    const cursor = (status: string, score: string, callId: string) =>
      Buffer.from(`${status}:${score}:${callId}`).toString('base64url');
    it.each([
      ['limit=0', 'limit=0', 'limit'],
      ['limit=501', 'limit=501', 'limit'],
      ['limit=abc', 'limit=abc', 'limit'],
      ['limit=1.5', 'limit=1.5', 'limit'],
      ['an empty limit', 'limit=', 'limit'],
      ['characters outside base64url', 'cursor=not-a-cursor!', 'cursor'],
      ['a cursor that decodes to garbage', 'cursor=garbage', 'cursor'],
      ['a score that is not a number', 'cursor=' + cursor('pending', 'soon', 'call-1'), 'cursor'],
      ['a call ID with a colon', 'cursor=' + cursor('pending', '12', 'call:1'), 'cursor'],
      ['an unknown list', 'cursor=' + cursor('everything', '12', 'call-1'), 'cursor'],
      ['a cursor of 1,000 characters', 'cursor=' + 'A'.repeat(1000), 'cursor'],
      // A cursor of another list would skip entries of this one.
      [
        'a cursor of another list than the status asked for',
        'status=pending&cursor=' + encodeApprovalCursor({ status: 'decided', score: '12', requestId: 'c' }),
        'cursor',
      ],
    ])('%s', async (_, query, field) => {
      const res = await get(`/approvals?${query}`);
      expect(res.status).toBe(400);
      expect(res.json.issues.map((i: { path: string }) => i.path)).toEqual([field]);
      expect(res.json.message).toContain(field);
    });

    it('but takes any well-formed cursor as a position (it grants nothing)', async () => {
      await storeAt(1_000, 'call-1');
      await storeAt(2_000, 'call-2');
      const after = encodeApprovalCursor({ status: 'pending', score: '1000', requestId: 'rq-call-1' });
      const res = await get(`/approvals?status=pending&cursor=${after}`);
      expect([res.status, res.json.map((v: ApprovalView) => v.request.callId)]).toEqual([200, ['call-2']]);
    });
  });

  it('bounds what the inbox reads to the oldest and the newest, and says how many wait in between', async () => {
    const t = Date.now() - 60_000;
    await Promise.all(
      Array.from({ length: 502 }, (_, i) => storeAt(t + i, `bulk-${String(i).padStart(3, '0')}`)),
    );
    const res = await fetch(`${service.url}/inbox/items`, {
      headers: asApprover('bob'),
    });
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(html).toContain('Showing the oldest 250 and the newest 250 of 502 pending requests');
    expect(html.match(/data-call-id=/g)).toHaveLength(500);
    for (const shown of ['bulk-000', 'bulk-249', 'bulk-252', 'bulk-501'])
      expect(html).toContain(`data-call-id="${shown}"`);
    for (const hidden of ['bulk-250', 'bulk-251']) expect(html).not.toContain(`data-call-id="${hidden}"`);
    // The gap is shown where it is: after the oldest, before the newest.
    const gap = html.indexOf('2 more pending requests in between');
    expect(gap).toBeGreaterThan(html.indexOf('data-call-id="bulk-249"'));
    expect(gap).toBeLessThan(html.indexOf('data-call-id="bulk-252"'));
  });

  it('documents limit, cursor and the Link header in the OpenAPI document', async () => {
    const doc = JSON.parse(await (await fetch(`${service.url}/docs-json`)).text());
    const list = doc.paths['/approvals'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(['status', 'limit', 'cursor']);
    expect(list.parameters[1].schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 500,
      default: 100,
    });
    expect(list.responses['200'].headers.Link.description).toContain('rel="next"');
  });
});
