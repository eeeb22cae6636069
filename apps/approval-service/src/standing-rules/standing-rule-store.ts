// Standing rules in Redis: one hash of rule ID → rule JSON under the approval state's home tag (the list people see
// and change), and a copy of it in every shard of the approval state (one key when there is one shard), so the script
// that decides a request by a rule checks, in the same step as it stores the request, that the rule is still there as
// it was matched. Nothing is cached in a process: every request reads the rules, so a revoke stops a rule at once on
// every replica. Adding writes every copy; revoking deletes from every copy before it answers. A rule decides a
// request only when both the home hash (read by the caller to match it) and the request's shard copy (checked by the
// script) hold it as matched, so a copy that missed a write can only send a request to people, never approve one.
import { randomBytes } from 'node:crypto';
import { StandingRuleSchema, type ApprovalRequest, type StandingRule } from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import type { ApprovalKeys } from '../core/approval-keys';

const DECIDE_BY_RULE = LuaScript.load(__dirname, 'decide-by-rule-5.lua');

// The encoded argument of decide-by-rule-5.lua (ARGV[1], a JSON object): the names its header lists.
type DecideByRuleArgs = {
  requestId: string;
  callId: string;
  runId: string;
  attempt: number;
  requestJson: string;
  groups: string;
  quorum: number;
  channels: string;
  now: number;
  nowIso: string;
  requester: string;
  ruleId: string;
  ruleJson: string;
  reason: string;
  rule: string;
  why: string;
  retentionMs: number;
  publishCheckMs: number;
  changesChannel: string;
};

/** A rule as stored, with its exact JSON: deciding by it checks that the stored JSON is still this. */
export interface StoredRule {
  rule: StandingRule;
  json: string;
}

export type DecideByRuleResult =
  | { status: 'decided' }
  | { status: 'already_stored'; current: string }
  | {
      status: 'rule_gone';
    };

export class StandingRuleStore {
  /** Every hash that holds the rules: the home hash first, then each shard's copy (the same key with one shard). */
  private readonly copies: string[];

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ApprovalKeys,
    private readonly retentionMs: number,
    private readonly publishCheckMs: number,
  ) {
    this.copies = [...new Set([keys.standingRules, ...keys.shards.map((shard) => shard.standingRules)])];
  }

  static newId(): string {
    return `sr-${randomBytes(6).toString('hex')}`;
  }

  async add(rule: StandingRule): Promise<void> {
    const json = JSON.stringify(StandingRuleSchema.parse(rule));
    // The copies first, the home hash last: once a request can match the rule (read from home), every shard has it.
    await Promise.all(this.copies.slice(1).map((key) => this.redis.hset(key, rule.id, json)));
    await this.redis.hset(this.keys.standingRules, rule.id, json);
  }

  /** Removes a rule and gives it back; undefined when there was none with that ID (or another revoke won). */
  async revoke(id: string): Promise<StandingRule | undefined> {
    const json = await this.redis.hget(this.keys.standingRules, id);
    if (!json) return undefined;
    // HDEL is the revoke: whatever was read before, the decide script finds the rule gone from every shard once this
    // answers (the home hash last, so a failed revoke leaves the rule listed, to be revoked again).
    await Promise.all(this.copies.slice(1).map((key) => this.redis.hdel(key, id)));
    const removed = await this.redis.hdel(this.keys.standingRules, id);
    return removed === 1 ? parseRule(json)?.rule : undefined;
  }

  async get(id: string): Promise<StandingRule | undefined> {
    const json = await this.redis.hget(this.keys.standingRules, id);
    return json ? parseRule(json)?.rule : undefined;
  }

  /**
   * Every rule that has not expired, oldest first. Expired ones are removed as they are found (they decide nothing
   * already: matching checks the expiry too).
   */
  async all(now = Date.now()): Promise<StoredRule[]> {
    const hash = await this.redis.hgetall(this.keys.standingRules);
    const live: StoredRule[] = [];
    const expired: string[] = [];
    for (const [id, json] of Object.entries(hash)) {
      const stored = parseRule(json);
      if (stored && Date.parse(stored.rule.expiresAt) > now) live.push(stored);
      else expired.push(id);
    }
    if (expired.length > 0) await Promise.all(this.copies.map((key) => this.redis.hdel(key, ...expired)));
    return live.sort((a, b) => a.rule.createdAt.localeCompare(b.rule.createdAt));
  }

  /**
   * Writes into every shard's copy the rules of the home hash it lacks (rules added before the shard count changed,
   * or a write that failed part-way), and removes from the copies the expired rules the home hash no longer holds
   * (a revoke that raced this); returns how many fields it wrote or removed. Run at start. A live rule is never
   * removed from a copy (racing an add, that would drop the new rule): a copy holding a rule the home hash lacks
   * decides nothing, because the caller matches rules from the home hash.
   */
  async syncCopies(now = Date.now()): Promise<number> {
    const home = await this.redis.hgetall(this.keys.standingRules);
    let changed = 0;
    for (const key of this.copies.slice(1)) {
      const copy = await this.redis.hgetall(key);
      const missing = Object.entries(home).filter(([id, json]) => copy[id] !== json);
      const stale = Object.entries(copy)
        .filter(([id, json]) => !(id in home) && !(Date.parse(parseRule(json)?.rule.expiresAt ?? '') > now))
        .map(([id]) => id);
      if (missing.length > 0) {
        await this.redis.hset(key, Object.fromEntries(missing));
        changed += missing.length;
      }
      if (stale.length > 0) changed += await this.redis.hdel(key, ...stale);
    }
    return changed;
  }

  /**
   * Stores the request as approved by the rule, if the rule is still stored as `rule.json`. `rule_gone`: revoked or
   * changed since it was read; the caller routes the request to people instead.
   */
  async decide(
    request: ApprovalRequest,
    rule: StoredRule,
    route: { groups: string[]; quorum: number; channels: string[]; rule: string; why: string },
    now = Date.now(),
  ): Promise<DecideByRuleResult> {
    const shard = this.keys.shardOf(request.requestId);
    const reply = (await DECIDE_BY_RULE.run(
      this.redis,
      [
        shard.request(request.requestId),
        shard.decided,
        shard.timers,
        shard.standingRules,
        shard.callRequests(request.callId),
      ],
      [
        encodeScriptArgs<DecideByRuleArgs>({
          requestId: request.requestId,
          callId: request.callId,
          runId: request.runId,
          attempt: request.attempt,
          requestJson: JSON.stringify(request),
          groups: route.groups.join(','),
          quorum: route.quorum,
          channels: route.channels.join(','),
          now,
          nowIso: new Date(now).toISOString(),
          requester: request.requester,
          ruleId: rule.rule.id,
          ruleJson: rule.json,
          reason: ruleReason(rule.rule),
          rule: route.rule,
          why: route.why,
          retentionMs: this.retentionMs,
          publishCheckMs: this.publishCheckMs,
          changesChannel: this.keys.changes,
        }),
      ],
    )) as [number, string?];
    if (reply[0] === 1) return { status: 'decided' };
    if (reply[0] === 0) return { status: 'already_stored', current: String(reply[1]) };
    return { status: 'rule_gone' };
  }
}

/** The outcome's reason: which rule, whose, until when. */
export function ruleReason(rule: StandingRule): string {
  return `standing rule ${rule.id} (by ${rule.createdBy}, until ${rule.expiresAt})`;
}

function parseRule(json: string): StoredRule | undefined {
  try {
    const parsed = StandingRuleSchema.safeParse(JSON.parse(json));
    return parsed.success ? { rule: parsed.data, json } : undefined;
  } catch {
    return undefined;
  }
}
