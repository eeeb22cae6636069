// The demo's ops tools (libs/demo-infra) as this server serves them: with honest hints for clients (read-only,
// destructive), and a log line per call. Tiers are not this server's business (Countersign's config sets them).
import { Inject, Injectable } from '@nestjs/common';
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Tier } from '@countersign/contracts';
import { InfraStore, opsTools } from '@countersign/demo-infra';
import type { Logger } from '@countersign/platform';
import { type ServedTool, servedTool } from '@countersign/tool-providers';
import { OPS_SERVER_CONFIG, type OpsServerConfig } from '../config/ops-server-config';
import { LOGGER } from '../core/ops-server-tokens';

/** What each tool does, as hints for clients; Countersign never lowers a tier for them. */
const HINTS: Record<Tier, ToolAnnotations> = {
  auto: { readOnlyHint: true, openWorldHint: false },
  confirm: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  manual_only: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
};

@Injectable()
export class ServedOpsTools {
  readonly tools: ServedTool[];

  constructor(
    infra: InfraStore,
    @Inject(OPS_SERVER_CONFIG) config: OpsServerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    const options = { restartMs: config.OPS_RESTART_MS, maxReplicas: config.OPS_MAX_REPLICAS };
    this.tools = opsTools(infra, options).map((tool) =>
      this.logged(tool.name, servedTool(tool, HINTS[tool.tier ?? 'auto'])),
    );
  }

  private logged(name: string, served: ServedTool): ServedTool {
    return {
      ...served,
      call: async (args, request) => {
        const where = { tool: name, caller: request.caller, ...request.meta };
        try {
          const result = await served.call(args, request);
          this.logger.info(where, 'tool called');
          return result;
        } catch (error) {
          this.logger.warn({ ...where, err: (error as Error).message }, 'tool call failed');
          throw error;
        }
      },
    };
  }
}
