// The order the gateway's connections open and close in: the MCP servers are connected before any transport serves
// (bootstrap starts one once the context is up), and closed after the transport stopped; Redis goes last.
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { RedisClient } from '@countersign/platform';
import { ToolProviders } from '@countersign/tool-providers';
import { REDIS } from './gateway-tokens';

@Injectable()
export class GatewayLifecycle
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  constructor(
    private readonly providers: ToolProviders,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.providers.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.providers.close();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
