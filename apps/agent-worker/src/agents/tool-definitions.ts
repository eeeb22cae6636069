// What approvers are shown of each tool (name, description, tier, argument schema), stored once per definition in
// the tool catalog the approval service reads: every agent's tools at start-up, and a provider's tool when a request
// names it (its server may have listed it since).
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { RegisteredTool } from '@countersign/authorization';
import type { Logger } from '@countersign/platform';
import { ToolCatalog } from '@countersign/shared-records';
import { WORKER_LOGGER } from '../core/worker-logger';
import { AgentCatalog } from './agent-catalog';

@Injectable()
export class ToolDefinitions implements OnModuleInit {
  constructor(
    @Inject(ToolCatalog) private readonly catalog: Pick<ToolCatalog, 'publish'>,
    @Inject(AgentCatalog) private readonly agents: Pick<AgentCatalog, 'registeredTools'>,
    @Inject(WORKER_LOGGER) private readonly logger: Logger,
  ) {}

  /** Stored before any request can name a tool (the queue workers start after every module's init). */
  onModuleInit(): Promise<void> {
    return this.publish(this.agents.registeredTools());
  }

  /** Once per definition (the catalog skips what it stored before). */
  async publish(tools: readonly RegisteredTool[]): Promise<void> {
    if (tools.length === 0) return;
    // Only for showing approvers what a tool does: a failure leaves the request without a description, not unasked.
    await this.catalog
      .publish(
        tools.map((tool) => ({
          definitionHash: tool.definitionHash,
          entry: {
            name: tool.definition.name,
            description: tool.definition.description.slice(0, 2_000),
            tier: tool.tier,
            argsSchema: tool.jsonSchema,
          },
        })),
      )
      .catch((error: unknown) =>
        this.logger.warn({ err: String(error) }, 'tool definitions not stored for approvers'),
      );
  }
}
