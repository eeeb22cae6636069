// Wires the MCP gateway. What must be checked before anything connects (settings, the gateway's own principal, the
// downstream servers' config) comes in from bootstrap, so nothing here reads the environment.
import { type DynamicModule, Module } from '@nestjs/common';
import { AuditKeyring, AuditLog } from '@countersign/audit';
import {
  Authenticator,
  createRedis,
  type Logger,
  type Principal,
  PrincipalDirectory,
  RateLimiter,
  type RedisClient,
  redisRateLimitStorage,
} from '@countersign/platform';
import { CountersignClient } from '@countersign/sdk';
import { SecretSource, ToolProviders } from '@countersign/tool-providers';
import { CallRecordStore } from './approvals/call-record-store';
import { ConfirmedCalls } from './approvals/confirmed-calls';
import { GatewayCalls } from './calls/gateway-calls';
import { ToolRelay } from './calls/tool-relay';
import { gatewayRateLimits } from './config/gateway-rate-limits';
import { GATEWAY_SETTINGS, type GatewaySettings } from './config/gateway-settings';
import { GatewayLifecycle } from './core/gateway-lifecycle';
import { GatewayMetrics } from './core/gateway-metrics';
import { GATEWAY_PRINCIPAL, LOGGER, REDIS } from './core/gateway-tokens';
import { GatewayServer } from './mcp/gateway-server';
import { PrincipalLimits } from './mcp/principal-limits';
import { GatewayCatalog } from './tools/gateway-catalog';
import { GatewayHttp } from './transports/gateway-http';
import { GatewayStdio } from './transports/gateway-stdio';

/** What bootstrap checked and built before the gateway's module: one typed object, as the worker's. */
export interface GatewayWiring {
  settings: GatewaySettings;
  logger: Logger;
  /** Authenticates every request (API tokens, OIDC): one per gateway. */
  authenticator: Authenticator;
  /** The gateway's own principal (GATEWAY_TOKEN), an approvals client. */
  self: Principal;
  /** The config's secret references, resolved from the environment map (and scrubbed from results). */
  secrets: SecretSource;
  /** The downstream MCP servers of GATEWAY_CONFIG (connected when the context starts: GatewayLifecycle). */
  providers: ToolProviders;
}

@Module({})
export class McpGatewayModule {
  static register(wiring: GatewayWiring): DynamicModule {
    const { settings, logger } = wiring;
    const { env } = settings;
    return {
      module: McpGatewayModule,
      providers: [
        { provide: GATEWAY_SETTINGS, useValue: settings },
        { provide: LOGGER, useValue: logger },
        { provide: GATEWAY_PRINCIPAL, useValue: wiring.self },
        { provide: Authenticator, useValue: wiring.authenticator },
        { provide: PrincipalDirectory, useValue: wiring.authenticator.directory },
        { provide: SecretSource, useValue: wiring.secrets },
        { provide: ToolProviders, useValue: wiring.providers },
        {
          provide: REDIS,
          useFactory: () =>
            createRedis(
              { url: env.REDIS_URL, clusterNodes: env.REDIS_CLUSTER_NODES },
              { name: 'mcp-gateway', logger },
            ),
        },
        {
          provide: AuditLog,
          inject: [REDIS],
          useFactory: (redis: RedisClient) =>
            new AuditLog(redis, env.KEY_PREFIX, 'mcp-gateway', AuditKeyring.fromEnv(env), {
              shards: env.AUDIT_SHARDS,
            }),
        },
        {
          provide: RateLimiter,
          inject: [REDIS],
          useFactory: (redis: RedisClient) =>
            new RateLimiter(gatewayRateLimits(env, logger), redisRateLimitStorage(redis)),
        },
        {
          provide: CallRecordStore,
          inject: [REDIS],
          useFactory: (redis: RedisClient) => new CallRecordStore(redis, env.KEY_PREFIX),
        },
        {
          provide: CountersignClient,
          useValue: new CountersignClient({ baseUrl: env.APPROVAL_SERVICE_URL, token: env.GATEWAY_TOKEN }),
        },
        GatewayLifecycle,
        GatewayMetrics,
        GatewayCatalog,
        ToolRelay,
        ConfirmedCalls,
        GatewayCalls,
        PrincipalLimits,
        GatewayServer,
        GatewayHttp,
        GatewayStdio,
      ],
    };
  }
}
