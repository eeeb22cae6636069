// Connects the configured MCP servers before the worker takes its first job (module init comes before the queue
// workers start, at bootstrap), and disconnects them after the workers drained (in-flight tool calls finish first).
import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ToolProviders } from '@countersign/tool-providers';

@Injectable()
export class ToolProvidersLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(ToolProviders) private readonly providers: ToolProviders) {}

  /** Waits for each server at most its `connectTimeoutMs`; one that is down is retried in the background. */
  onModuleInit(): Promise<void> {
    return this.providers.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.providers.close();
  }
}
