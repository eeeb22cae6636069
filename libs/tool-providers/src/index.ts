// @countersign/tool-providers: tools that live outside the service (MCP servers over stdio or streamable HTTP, plain
// HTTP tools) as ToolDefinitions for the policy pipeline. Used by the agent worker; kept free of Nest and Redis so a
// gateway can serve the same tools.
export * from './secrets';
export * from './provider-config.schema';
export * from './tier-rules';
export * from './name-patterns';
export * from './json-schema-args';
export * from './result-text';
export * from './backoff';
export * from './mcp-connection';
export * from './mcp-tool-provider';
export * from './http-tool';
export * from './tool-providers';
export * from './mcp-tool-server';
export * from './mcp-http-server';
export * from './preview-template';
