// The call ledger's transitions (libs/call-ledger/src/lua/includes/call-ledger.lua) against a real Redis, held against the
// TypeScript state table (CALL_TRANSITIONS): what the scripts of every app include is checked once, here.
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  CALL_TRANSITIONS,
  CallState,
  canMove,
  isSettled,
  ledgerFields,
  type CallState as State,
} from '@countersign/call-ledger';
import { encodeScriptArgs, LuaScript } from '@countersign/platform';
import { deletePrefixedKeys, TEST_REDIS_URL, uniquePrefixes } from './support/redis';

const ledger = LuaScript.load(join(__dirname, 'support'), 'ledger-op-1.lua');
const prefixes = uniquePrefixes('ledger');
const ALL = Object.values(CallState);

describe('the call ledger', () => {
  const redis = new Redis(TEST_REDIS_URL);
  let n = 0;
  let key: string;
  const p = 'c:call-1:';
  const fields = ledgerFields(p);

  const op = async (
    args: Record<string, string | number | string[] | undefined>,
  ): Promise<[string, string]> =>
    (await ledger.run(redis, [key], [encodeScriptArgs({ prefix: p, ...args })])) as [string, string];
  const at = (state: State) => redis.hset(key, fields.state, state);
  const stateNow = () => redis.hget(key, fields.state);

  beforeEach(() => {
    key = `${prefixes.keyPrefix}:call:${++n}`;
  });
  afterAll(async () => {
    await deletePrefixedKeys(prefixes);
    redis.disconnect();
  });

  it('includes the library snippet into a script of another folder', () => {
    expect(ledger.source).toContain('local function ledgerClaim');
  });

  it('claims an approved call once: the second claim finds it executing', async () => {
    await at(CallState.Approved);
    expect(await op({ op: 'claim', token: 't1' })).toEqual(['1', 'approved']);
    expect(await op({ op: 'claim', token: 't2' })).toEqual(['0', 'executing']);
    expect(await redis.hmget(key, fields.state, fields.token)).toEqual(['executing', 't1']);
    expect(Number(await redis.hget(key, fields.heartbeat))).toBeGreaterThan(0);
  });

  it.each(ALL.filter((s) => s !== CallState.Approved))(
    'refuses to claim a call that is %s',
    async (state) => {
      await at(state);
      expect(await op({ op: 'claim', token: 't1' })).toEqual(['0', state]);
      expect(await stateNow()).toBe(state);
    },
  );

  it('refuses to claim a call it has no state for', async () => {
    expect(await op({ op: 'claim', token: 't1' })).toEqual(['0', '']);
    expect(await redis.exists(key)).toBe(0);
  });

  it('completes only under the token that claimed it, once', async () => {
    await at(CallState.Approved);
    await op({ op: 'claim', token: 't1' });
    expect(await op({ op: 'complete', token: 't2', result: '{"x":1}' })).toEqual(['0', 'executing']);
    expect(await op({ op: 'complete', token: 't1', result: '{"x":2}' })).toEqual(['1', 'executing']);
    expect(await op({ op: 'complete', token: 't1', result: '{"x":3}' })).toEqual(['0', 'done']);
    expect(await redis.hmget(key, fields.state, fields.result, fields.token, fields.heartbeat)).toEqual([
      'done',
      '{"x":2}',
      null,
      null,
    ]);
  });

  it('heartbeats only the executing call of its own token', async () => {
    await at(CallState.Approved);
    await op({ op: 'claim', token: 't1' });
    await redis.hset(key, fields.heartbeat, '1');
    expect(await op({ op: 'heartbeat', token: 'other' })).toEqual(['0', 'executing']);
    expect(await redis.hget(key, fields.heartbeat)).toBe('1');
    expect(await op({ op: 'heartbeat', token: 't1' })).toEqual(['1', 'executing']);
    expect(Number(await redis.hget(key, fields.heartbeat))).toBeGreaterThan(1);
  });

  it('leaves a live executor alone and interrupts a dead one, which can then only be asked about again', async () => {
    await at(CallState.Approved);
    await op({ op: 'claim', token: 't1' });
    const [alive, age] = await op({ op: 'interrupt', staleAfterMs: 60_000 });
    expect(alive).toBe('alive');
    expect(Number(age)).toBeLessThan(60_000);

    await redis.hset(key, fields.heartbeat, '1');
    expect(await op({ op: 'interrupt', staleAfterMs: 60_000 })).toEqual(['interrupted', '']);
    expect(await redis.hmget(key, fields.state, fields.token, fields.heartbeat)).toEqual([
      'interrupted',
      null,
      null,
    ]);
    // The dead executor's late result is not recorded, and nobody may claim it again before it is re-asked.
    expect(await op({ op: 'complete', token: 't1', result: '{}' })).toEqual(['0', 'interrupted']);
    expect(await op({ op: 'claim', token: 't2' })).toEqual(['0', 'interrupted']);
    expect(await op({ op: 'move', from: 'interrupted', to: 'pending' })).toEqual(['1', 'interrupted']);
  });

  it('hands a finished result to whoever finds the call done', async () => {
    await redis.hset(key, fields.state, 'done', fields.result, '{"ok":true}');
    expect(await op({ op: 'interrupt', staleAfterMs: 1 })).toEqual(['done', '{"ok":true}']);
  });

  it('never moves into or out of executing without the token', async () => {
    await at(CallState.Approved);
    expect(await op({ op: 'move', from: 'approved', to: 'executing' })).toEqual(['0', 'approved']);
    await op({ op: 'claim', token: 't1' });
    expect(await op({ op: 'move', from: 'executing', to: 'done' })).toEqual(['0', 'executing']);
    expect(await stateNow()).toBe('executing');
  });

  it('compare-and-sets a state, storing a result when given one', async () => {
    await at(CallState.Denied);
    expect(await op({ op: 'move', from: 'approved', to: 'done' })).toEqual(['0', 'denied']);
    expect(await op({ op: 'move', from: ['approved', 'denied'], to: 'done', result: '{"r":1}' })).toEqual([
      '1',
      'denied',
    ]);
    expect(await redis.hmget(key, fields.state, fields.result)).toEqual(['done', '{"r":1}']);
  });

  it('keeps calls under other prefixes of the same hash apart', async () => {
    await redis.hset(key, `c:other:s`, 'approved');
    await at(CallState.Approved);
    await op({ op: 'claim', token: 't1' });
    expect(await redis.hget(key, 'c:other:s')).toBe('approved');
  });
});

describe('the call state table', () => {
  it('lets nothing leave a settled state', () => {
    for (const state of ALL.filter(isSettled)) expect(CALL_TRANSITIONS[state]).toEqual([]);
  });

  it('enters executing only from approved, and leaves it only for done, refused or interrupted', () => {
    expect(ALL.filter((s) => canMove(s, CallState.Executing))).toEqual([CallState.Approved]);
    expect(CALL_TRANSITIONS.executing).toEqual(['done', 'refused', 'interrupted']);
  });

  it('never runs an interrupted call again without a new decision', () => {
    expect(CALL_TRANSITIONS.interrupted).toEqual([CallState.Pending]);
  });
});
