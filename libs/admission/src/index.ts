// @countersign/admission: admission hooks (signed HTTP callbacks before and after a tool call), one client for every
// service that runs tool calls.
export * from './admission-config.schema';
export * from './hook-client';
export * from './admission-plugins';
export * from './confirmation-handler.schema';
export * from './confirmation-handlers';
