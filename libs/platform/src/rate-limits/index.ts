export * from './rate-limit.schema';
export * from './rate-limited.decorator';
export * from './rate-limiter';
export * from './rate-limit.guards';
export * from './rate-limit-storage';
export * from './trust-proxy';
