// Moved to libs/demo-infra (the ops MCP server uses it too); re-exported so that existing imports keep working.
export {
  InfraStore,
  UnknownServiceError,
  type InfraView,
  type ServiceStatus,
  type ServiceView,
  type VolumeView,
} from '@countersign/demo-infra';
