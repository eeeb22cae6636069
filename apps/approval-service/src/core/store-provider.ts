// How a feature module provides a store of the approval state: built from the commands connection, the key layout and
// the validated environment, so each store keeps a plain constructor tests can call.
import type { FactoryProvider } from '@nestjs/common';
import { RedisConnections, type RedisClient } from '@countersign/platform';
import {
  APPROVAL_SERVICE_CONFIG,
  type ApprovalServiceConfig,
  type ApprovalServiceEnv,
} from '../config/approval-service.config';
import type { ApprovalKeys } from './approval-keys';
import { APPROVAL_KEYS } from './tokens';

type Build<T> = (redis: RedisClient, keys: ApprovalKeys, env: ApprovalServiceEnv) => T;

/** A store built by its constructor from the connection and the key layout, or by `build`. */
export function provideStore<T>(store: new (redis: RedisClient, keys: ApprovalKeys) => T): FactoryProvider<T>;
export function provideStore<T>(
  store: abstract new (...args: never[]) => T,
  build: Build<T>,
): FactoryProvider<T>;
export function provideStore<T>(
  store: abstract new (...args: never[]) => T,
  build?: Build<T>,
): FactoryProvider<T> {
  // Without `build`, the first overload says the constructor takes (redis, keys).
  const make =
    build ?? ((redis, keys) => new (store as new (r: RedisClient, k: ApprovalKeys) => T)(redis, keys));
  return {
    provide: store,
    inject: [RedisConnections, APPROVAL_KEYS, APPROVAL_SERVICE_CONFIG],
    useFactory: (redis: RedisConnections, keys: ApprovalKeys, { env }: ApprovalServiceConfig) =>
      make(redis.commands, keys, env),
  };
}

/**
 * A store whose scripts settle requests: a settled request stays readable for APPROVAL_RETENTION, and its decision
 * may stay unpublished for TIMER_LEASE_MS before the sweep publishes it (the settling replica is presumed dead).
 */
export function provideSettlingStore<T>(
  store: new (redis: RedisClient, keys: ApprovalKeys, retentionMs: number, publishCheckMs: number) => T,
): FactoryProvider<T> {
  return provideStore(
    store,
    (redis, keys, env) => new store(redis, keys, env.APPROVAL_RETENTION, env.TIMER_LEASE_MS),
  );
}
