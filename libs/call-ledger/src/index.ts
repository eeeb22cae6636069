// @countersign/call-ledger: one governed call's states (call-state.ts) and the Lua functions that move it
// (lua/includes/call-ledger.lua, included by the scripts of the worker, the approvals API and the MCP gateway).
export * from './call-state';
