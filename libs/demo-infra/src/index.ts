// @countersign/demo-infra: the demo's simulated infrastructure (in Redis) and the ops tools that act on it.
export * from './infra-keys';
export * from './infra-store';
export * from './ops-tools';
