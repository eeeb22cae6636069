import { SessionTable, type TableSession } from './mcp-sessions';

describe('SessionTable', () => {
  const ended: TableSession[] = [];
  const table = (perCaller: number, total: number, idleMs = 60_000) =>
    new SessionTable<TableSession>({ perCaller, total, idleMs }, (s) => ended.push(s));
  /** Admits and adds a session of `caller` last seen at `at`. */
  const open = (sut: SessionTable<TableSession>, caller: string, at: number) => {
    const refused = sut.admit(caller, at);
    if (refused) return refused;
    const session = { caller, lastSeen: at };
    sut.add(session);
    sut.name(`${caller}@${at}`, session);
    return session;
  };

  beforeEach(() => ended.splice(0));

  it("makes room at a caller's cap by ending its own longest-idle session, whoever else is idler", () => {
    const sut = table(2, 10);
    const others = open(sut, 'alice', 1);
    const a1 = open(sut, 'mallory', 2) as TableSession;
    open(sut, 'mallory', 3);
    a1.lastSeen = 4; // used again: the session of 3 is now mallory's longest idle
    open(sut, 'mallory', 5);
    expect(ended).toEqual([{ caller: 'mallory', lastSeen: 3 }]);
    expect(sut.get('mallory@3')).toBeUndefined();
    expect(sut.get('alice@1')).toBe(others);
    expect(sut.size).toBe(3);
  });

  it('tells apart two sessions used within the same millisecond by the order they were used in', () => {
    const sut = table(2, 10);
    const first = open(sut, 'mallory', 7) as TableSession;
    open(sut, 'mallory', 7);
    sut.touch(first, 7); // the same millisecond: the second is now the longer idle
    open(sut, 'mallory', 7);
    expect(ended).toEqual([{ caller: 'mallory', lastSeen: 7 }]);
    expect(ended[0]).not.toBe(first);
  });

  it('refuses past the ceiling and ends nobody for it; a caller at its own cap still replaces its own', () => {
    const sut = table(1, 2);
    open(sut, 'alice', 1);
    open(sut, 'bob', 2);
    expect(sut.admit('carol', 3)).toEqual({
      status: 503,
      message: expect.stringContaining('at most 2 sessions'),
    });
    expect(ended).toEqual([]);
    expect(open(sut, 'bob', 4)).toEqual({ caller: 'bob', lastSeen: 4 });
    expect(ended).toEqual([{ caller: 'bob', lastSeen: 2 }]);
  });

  it("ends anyone's session idle longer than idleMs when the next one opens (as before)", () => {
    const sut = table(5, 10, 1_000);
    open(sut, 'alice', 0);
    open(sut, 'bob', 900);
    open(sut, 'carol', 1_500);
    expect(ended).toEqual([{ caller: 'alice', lastSeen: 0 }]);
    expect(sut.size).toBe(2);
  });

  it('forgets a session that ended on its own, so its place is free', () => {
    const sut = table(1, 1);
    const session = open(sut, 'alice', 1) as TableSession;
    sut.remove(session);
    expect(sut.get('alice@1')).toBeUndefined();
    expect(open(sut, 'bob', 2)).toEqual({ caller: 'bob', lastSeen: 2 });
    expect(ended).toEqual([]);
  });
});
