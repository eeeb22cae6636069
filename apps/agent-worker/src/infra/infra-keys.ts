// Moved to libs/demo-infra (the ops MCP server uses it too); re-exported so that existing imports keep working.
export { infraKeys } from '@countersign/demo-infra';
