// The simulated infrastructure is seeded (SEED_DEMO_INFRA) before the endpoint serves (bootstrap starts it once the
// context is up), and Redis closes last, after the endpoint stopped.
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InfraStore } from '@countersign/demo-infra';
import type { RedisClient } from '@countersign/platform';
import { OPS_SERVER_CONFIG, type OpsServerConfig } from '../config/ops-server-config';
import { REDIS } from './ops-server-tokens';

@Injectable()
export class OpsServerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly infra: InfraStore,
    @Inject(OPS_SERVER_CONFIG) private readonly config: OpsServerConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.SEED_DEMO_INFRA) await this.infra.seedDefaults();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
