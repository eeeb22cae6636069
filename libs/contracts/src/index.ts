export * from './common.schema';
export * from './queues';
export * from './runs.schema';
export * from './approval-request.schema';
export * from './decision.schema';
export * from './approvals.schema';
export * from './validation';
export * from './approval-service.queues';
