// Where people's denials are kept for sticky denials: with the run (a field of its hash, gone with the run) or for the
// requester (a key per requester and fingerprint that expires after the tool's window).
import { LuaScript, type RedisClient } from '@countersign/platform';
import { requesterDenialKey, runKey, stickyDenialField } from './run-keys';

const SCRIPTS = { keepDenial: LuaScript.load(__dirname, 'keep-denial-1.lua') };

/** A person's denial, as a later refusal of the same call repeats it. */
export interface KeptDenial {
  runId: string;
  callId: string;
  requestId?: string;
  approvers: string[];
  reason?: string;
  decidedAt: string;
}

/** Where one call's denial is looked up: with the run, or for the requester. */
export type DenialScope = { kind: 'run' } | { kind: 'requester'; windowSeconds: number };

export class DeniedCalls {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyPrefix: string,
  ) {}

  async keep(
    run: { runId: string; userId: string },
    fingerprint: string,
    scope: DenialScope,
    denial: KeptDenial,
  ): Promise<void> {
    const json = JSON.stringify(denial);
    if (scope.kind === 'requester') {
      const key = requesterDenialKey(this.keyPrefix, run.userId, fingerprint);
      await this.redis.set(key, json, 'EX', scope.windowSeconds);
      return;
    }
    await SCRIPTS.keepDenial.run(
      this.redis,
      [runKey(this.keyPrefix, run.runId)],
      [stickyDenialField(fingerprint), json],
    );
  }

  /**
   * The kept denials of these fingerprints, by fingerprint: one HMGET on the run hash and one MGET of the requester's
   * keys at most, side by side. Throws when Redis does (the caller fails closed: nothing is parked or refused).
   */
  async find(
    run: { runId: string; userId: string },
    lookups: { fingerprint: string; scope: DenialScope }[],
  ): Promise<Map<string, KeptDenial>> {
    const inRun = lookups.filter((l) => l.scope.kind === 'run').map((l) => l.fingerprint);
    const forRequester = lookups.filter((l) => l.scope.kind === 'requester').map((l) => l.fingerprint);
    const [runValues, requesterValues] = await Promise.all([
      inRun.length > 0
        ? this.redis.hmget(runKey(this.keyPrefix, run.runId), ...inRun.map(stickyDenialField))
        : [],
      forRequester.length > 0
        ? this.redis.mget(...forRequester.map((fp) => requesterDenialKey(this.keyPrefix, run.userId, fp)))
        : [],
    ]);
    const found = new Map<string, KeptDenial>();
    const add = (prints: string[], values: (string | null)[]) =>
      prints.forEach((fp, i) => {
        const denial = parseDenial(values[i]);
        if (denial) found.set(fp, denial);
      });
    add(inRun, runValues);
    add(forRequester, requesterValues);
    return found;
  }
}

/** A kept denial; one that does not read as one is no denial (the call is asked about, as without it). */
function parseDenial(value: string | null | undefined): KeptDenial | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as KeptDenial;
    return typeof parsed.callId === 'string' && Array.isArray(parsed.approvers) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
