// What every feature of the service shares: the key layout of the approval state (and the check that its shard count
// did not change under open requests), metrics, the audit trail, the service's public address, follow-up work, and
// the records the agent worker shares through Redis. Imported by each feature module (not global), so it closes
// after them: the audit trail drains its appends before the queue module closes the connections.
import { Module } from '@nestjs/common';
import { METRICS_REGISTRY } from '@countersign/platform';
import { DecidedCallResults, RunReaders, ToolCatalog } from '@countersign/shared-records';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { approvalKeys } from './approval-keys';
import { AuditTrail } from './audit-trail';
import { FollowUps } from './follow-ups';
import { Metrics } from './metrics';
import { ServiceAddress } from './service-address';
import { ShardLayout } from './shard-layout';
import { provideStore } from './store-provider';
import { APPROVAL_KEYS } from './tokens';

const providers = [
  {
    provide: APPROVAL_KEYS,
    inject: [APPROVAL_SERVICE_CONFIG],
    useFactory: ({ env }: ApprovalServiceConfig) => approvalKeys(env.KEY_PREFIX, env.APPROVAL_SHARDS),
  },
  ShardLayout,
  Metrics,
  { provide: METRICS_REGISTRY, inject: [Metrics], useFactory: (m: Metrics) => m.registry },
  AuditTrail,
  ServiceAddress,
  FollowUps,
  provideStore(RunReaders, (redis, _keys, env) => new RunReaders(redis, env.KEY_PREFIX)),
  provideStore(ToolCatalog, (redis, _keys, env) => new ToolCatalog(redis, env.KEY_PREFIX)),
  provideStore(DecidedCallResults, (redis, _keys, env) => new DecidedCallResults(redis, env.KEY_PREFIX)),
];

@Module({ providers, exports: providers })
export class CoreModule {}
