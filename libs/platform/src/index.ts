// @countersign/platform: the plumbing both services share (config, Redis, queues, logs, audit log, validation).
export * from './base-config';
export * from './redis';
export * from './logger';
export * from './lua';
export * from './audit-log';
export * from './zod-validation.pipe';
export * from './pino-nest-logger';
export * from './queues/failed-for-good';
export * from './queues/job-catalog';
export * from './queues/queue-options';
export * from './queues/queue-workers';
export * from './queues/queue.module';
export * from './queues/queues';
export * from './queues/redis-connections';
