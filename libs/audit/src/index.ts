// @countersign/audit: the append-only, hash-chained audit log every service writes (signed chains in Redis Streams),
// its reader, verifier and retention.
export * from './audit-chain-walk';
export * from './audit-checkpoint';
export * from './audit-entry';
export * from './audit-keyring';
export * from './audit-log';
export * from './audit-page-reader';
export * from './audit-retention';
export * from './audit-shards';
export * from './audit-verifier';
export * from './stream-id';
