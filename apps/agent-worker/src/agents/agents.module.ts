// The agents of this instance and the tools they may call: the agent catalog, the tool providers' lifecycle (MCP
// servers, HTTP tools), the simulated infrastructure the built-in ops tools act on, and the tool definitions shown to
// approvers.
import { Module } from '@nestjs/common';
import { InfraStore } from '@countersign/demo-infra';
import { ToolCatalog } from '@countersign/shared-records';
import { fromRedis } from '../core/worker-core.module';
import { ModelsModule } from '../models/models.module';
import { AdmissionRecorder } from './admission-recorder';
import { AgentCatalog } from './agent-catalog';
import { ToolDefinitions } from './tool-definitions';
import { ToolProvidersLifecycle } from './tool-providers.lifecycle';

@Module({
  imports: [ModelsModule],
  providers: [
    fromRedis(InfraStore, (redis, { env }) => new InfraStore(redis, env.KEY_PREFIX)),
    fromRedis(ToolCatalog, (redis, { env }) => new ToolCatalog(redis, env.KEY_PREFIX)),
    AdmissionRecorder,
    AgentCatalog,
    ToolDefinitions,
    ToolProvidersLifecycle,
  ],
  exports: [AgentCatalog, InfraStore, ToolDefinitions],
})
export class AgentsModule {}
