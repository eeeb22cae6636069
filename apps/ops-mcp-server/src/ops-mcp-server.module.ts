// Wires the ops MCP server. Its validated config, principals and logger come in from bootstrap, so nothing here reads
// the environment.
import { type DynamicModule, Module } from '@nestjs/common';
import { InfraStore } from '@countersign/demo-infra';
import {
  Authenticator,
  createRedis,
  type Logger,
  type PrincipalsConfig,
  type RedisClient,
} from '@countersign/platform';
import { OPS_SERVER_CONFIG, type OpsServerConfig } from './config/ops-server-config';
import { OpsServerLifecycle } from './core/ops-server-lifecycle';
import { LOGGER, REDIS } from './core/ops-server-tokens';
import { ServedOpsTools } from './tools/served-ops-tools';
import { OpsHttp } from './transports/ops-http';

/** What bootstrap validated before the module: one typed object. */
export interface OpsServerWiring {
  config: OpsServerConfig;
  principals: PrincipalsConfig;
  logger: Logger;
}

@Module({})
export class OpsMcpServerModule {
  static register({ config, principals, logger }: OpsServerWiring): DynamicModule {
    return {
      module: OpsMcpServerModule,
      providers: [
        { provide: OPS_SERVER_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: Authenticator, useValue: new Authenticator(principals) },
        {
          provide: REDIS,
          useFactory: () =>
            createRedis(
              { url: config.REDIS_URL, clusterNodes: config.REDIS_CLUSTER_NODES },
              { name: 'ops-mcp-server', logger },
            ),
        },
        {
          provide: InfraStore,
          inject: [REDIS],
          useFactory: (redis: RedisClient) => new InfraStore(redis, config.KEY_PREFIX),
        },
        OpsServerLifecycle,
        ServedOpsTools,
        OpsHttp,
      ],
    };
  }
}
