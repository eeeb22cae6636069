// The sessions of one MCP endpoint, bounded so that no caller can end another's: a cap per caller (a caller at its cap
// makes room by ending its own longest-idle session), a ceiling over all callers that refuses new sessions instead of
// ending anyone's, and the idle expiry. Kept apart from the HTTP handling so the rule is read in one place.

export interface SessionLimits {
  perCaller: number;
  total: number;
  idleMs: number;
}

/** What the table needs of a session. */
export interface TableSession {
  caller: string;
  /** When its last request came (ms since the epoch): the longest idle goes first. */
  lastSeen: number;
}

/** Why a session could not open (the endpoint answers with it). */
export interface SessionRefusal {
  status: 503;
  message: string;
}

export class SessionTable<S extends TableSession> {
  /** Every session opened (initialized or not yet). */
  private readonly live = new Set<S>();
  /** Initialized sessions by their ID, and back. */
  private readonly byId = new Map<string, S>();
  private readonly idOf = new Map<S, string>();

  /** @param stop stops a session the table ended (its server closes); must not throw. */
  constructor(
    private readonly limits: SessionLimits,
    private readonly stop: (session: S) => void,
  ) {}

  get size(): number {
    return this.live.size;
  }

  all(): S[] {
    return [...this.live];
  }

  get(id: string): S | undefined {
    return this.byId.get(id);
  }

  /**
   * Makes room for one more session of `caller`, or says why there is none. The caller must `add` its session in the
   * same synchronous step (no await between), so that requests arriving together cannot all pass the same check.
   */
  admit(caller: string, now = Date.now()): SessionRefusal | undefined {
    this.dropIdle(now);
    const own = [...this.live].filter((s) => s.caller === caller).sort((a, b) => a.lastSeen - b.lastSeen);
    for (const session of own.slice(0, Math.max(0, own.length + 1 - this.limits.perCaller)))
      this.end(session);
    if (this.live.size >= this.limits.total)
      return {
        status: 503,
        message: `this server holds at most ${this.limits.total} sessions, all in use; try again when one ends`,
      };
    return undefined;
  }

  /**
   * A request of the session came now. The table keeps its sessions in the order they were last used, so two sessions
   * used within the same millisecond still leave the earlier-used one as the longer idle.
   */
  touch(session: S, now = Date.now()): void {
    session.lastSeen = now;
    if (!this.live.delete(session)) return;
    this.live.add(session);
  }

  /** A session `admit` made room for. */
  add(session: S): void {
    this.live.add(session);
  }

  /** The session was initialized with this ID (requests find it by it from now on). */
  name(id: string, session: S): void {
    if (!this.live.has(session)) return;
    this.byId.set(id, session);
    this.idOf.set(session, id);
  }

  /** The session ended on its own (its client ended it, or its transport closed). */
  remove(session: S): void {
    this.live.delete(session);
    const id = this.idOf.get(session);
    if (id === undefined) return;
    this.idOf.delete(session);
    this.byId.delete(id);
  }

  /** Ends a session: out of the table, and stopped. */
  end(session: S): void {
    this.remove(session);
    this.stop(session);
  }

  /** Ends every session (the endpoint closes). */
  clear(): S[] {
    const all = this.all();
    this.live.clear();
    this.byId.clear();
    this.idOf.clear();
    return all;
  }

  /** Clients that went away without ending their session (a crashed worker) must not hold places for ever. */
  private dropIdle(now: number): void {
    const idleBefore = now - this.limits.idleMs;
    for (const session of this.live) if (session.lastSeen < idleBefore) this.end(session);
  }
}
