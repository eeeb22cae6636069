// @countersign/authorization: the pure policy engine (no Nest, no Redis, no I/O).
export * from './fingerprint';
export * from './decision-signature';
export * from './webhook-signature';
export * from './tool';
export * from './call-preview';
export * from './precondition';
export * from './tool-registry';
export * from './access-control';
export * from './call-policy';
export * from './confirmation-policy';
export * from './confirmation-handler';
export * from './decisions';
export * from './plugins';
export * from './tool-call-outcome';
export * from './tool-call-pipeline';
export * from './concurrency';
