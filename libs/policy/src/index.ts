// @countersign/policy: Cedar policy sets as call policies (RBAC, tiers and the people a call needs), for every service
// that governs tool calls, and the `policy` config section that chooses them.
export * from './policy-config.schema';
export * from './cedar-policy-set';
export * from './policy-options';
