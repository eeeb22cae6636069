// Standing rules in Redis: one hash of rule ID → rule JSON, beside the approval state (same hash tag), so the script
// that decides a request by a rule checks, in the same step, that the rule is still there as it was matched. Nothing is
// cached in a process: every request reads the rules, so a revoke stops a rule at once on every replica.
import { randomBytes } from 'node:crypto';
import { StandingRuleSchema, type ApprovalRequest, type StandingRule } from '@countersign/contracts';
import { encodeScriptArgs, LuaScript, type RedisClient } from '@countersign/platform';
import { approvalKeys, type ApprovalKeys } from './approval-keys';

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
  private readonly keys: ApprovalKeys;

  constructor(
    private readonly redis: RedisClient,
    keyPrefix: string,
    private readonly retentionMs: number,
    private readonly publishCheckMs: number,
  ) {
    this.keys = approvalKeys(keyPrefix);
  }

  static newId(): string {
    return `sr-${randomBytes(6).toString('hex')}`;
  }

  async add(rule: StandingRule): Promise<void> {
    await this.redis.hset(this.keys.standingRules, rule.id, JSON.stringify(StandingRuleSchema.parse(rule)));
  }

  /** Removes a rule and gives it back; undefined when there was none with that ID (or another revoke won). */
  async revoke(id: string): Promise<StandingRule | undefined> {
    const json = await this.redis.hget(this.keys.standingRules, id);
    if (!json) return undefined;
    // HDEL is the revoke: whatever was read before, the decide script finds the rule gone from here on.
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
    if (expired.length > 0) await this.redis.hdel(this.keys.standingRules, ...expired);
    return live.sort((a, b) => a.rule.createdAt.localeCompare(b.rule.createdAt));
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
    const keys = this.keys;
    const reply = (await DECIDE_BY_RULE.run(
      this.redis,
      [
        keys.request(request.requestId),
        keys.decided,
        keys.timers,
        keys.standingRules,
        keys.callRequests(request.callId),
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
          changesChannel: keys.changes,
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
