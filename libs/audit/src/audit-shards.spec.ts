import type { AuditEntry } from '@countersign/contracts';
import { mergeAuditPages, mergeTrims, mergeVerifications } from './audit-shards';

const entry = (id: string): AuditEntry =>
  ({
    id,
    type: 'tool.executed',
    at: '',
    actor: 'svc',
    service: 'svc',
    chain: 'c',
    hash: '',
    detail: {},
  }) as AuditEntry;
const ids = (page: { entries: AuditEntry[] }) => page.entries.map((e) => e.id);

describe('mergeAuditPages', () => {
  it('keeps the newest `limit` of all streams, oldest first, and hands on the oldest kept as the cursor', () => {
    const merged = mergeAuditPages(
      [{ entries: [entry('1-0'), entry('4-0')] }, { entries: [entry('2-0'), entry('3-0'), entry('5-0')] }],
      3,
    );
    expect(ids(merged)).toEqual(['3-0', '4-0', '5-0']);
    expect(merged.next).toBe('3-0');
  });

  it('has no cursor when every stream was read to its start and all fit', () => {
    const merged = mergeAuditPages([{ entries: [entry('1-0')] }, { entries: [entry('2-0')] }], 5);
    expect(ids(merged)).toEqual(['1-0', '2-0']);
    expect(merged.next).toBeUndefined();
  });

  it('cuts at the newest point a stream did not read past, leaving what is older for the next page', () => {
    // The second stream stopped at 6-0 (its scan budget): below that it may hold entries not read yet.
    const merged = mergeAuditPages(
      [{ entries: [entry('2-0'), entry('7-0')] }, { entries: [entry('8-0')], next: '6-0' }],
      10,
    );
    expect(ids(merged)).toEqual(['7-0', '8-0']);
    expect(merged.next).toBe('6-0');
  });

  it('never splits entries of different streams that share an ID across two pages', () => {
    const merged = mergeAuditPages(
      [{ entries: [entry('5-0'), entry('9-0')] }, { entries: [entry('5-0'), entry('8-0')] }],
      3,
    );
    expect(ids(merged)).toEqual(['8-0', '9-0']);
    expect(merged.next).toBe('8-0');
  });
});

describe('mergeVerifications and mergeTrims', () => {
  it('is intact only when every stream is, with the counts summed and the first break', () => {
    const merged = mergeVerifications([
      { intact: true, entries: 2, chains: 1, keys: ['k1'] },
      { intact: false, entries: 3, chains: 2, keys: ['k2', 'k1'], brokenAt: { id: '4-0', reason: 'edited' } },
    ]);
    expect(merged).toEqual({
      intact: false,
      entries: 5,
      chains: 3,
      keys: ['k1', 'k2'],
      brokenAt: { id: '4-0', reason: 'edited' },
    });
  });

  it('refuses when one stream refused, is busy when one was busy, and sums what was trimmed', () => {
    expect(
      mergeTrims([
        { status: 'trimmed', trimmed: 2, more: false },
        { status: 'refused', trimmed: 1, at: '3-0', reason: 'bad link' },
      ]),
    ).toEqual({ status: 'refused', trimmed: 3, at: '3-0', reason: 'bad link' });
    expect(
      mergeTrims([
        { status: 'busy', trimmed: 0 },
        { status: 'trimmed', trimmed: 4, more: true },
      ]),
    ).toEqual({ status: 'busy', trimmed: 4 });
    expect(
      mergeTrims([
        { status: 'trimmed', trimmed: 1, more: false },
        { status: 'trimmed', trimmed: 4, more: true },
      ]),
    ).toEqual({ status: 'trimmed', trimmed: 5, more: true });
  });
});
