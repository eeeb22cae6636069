// @countersign/platform: the plumbing both services share (config, Redis, logs, audit log, validation).
export * from './base-config';
export * from './redis';
export * from './logger';
export * from './lua';
export * from './lua-source';
export * from './audit-log';
export * from './zod-validation.pipe';
export * from './pino-nest-logger';
export * from './config-file';
export * from './identity';
export * from './run-readers';
export * from './metrics-endpoint';
export * from './tool-catalog';
