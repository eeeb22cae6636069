// The duration format moved to @countersign/platform (PRINCIPALS_CONFIG's oidc.maxTokenLifetime uses it too).
export { DurationSchema } from '@countersign/platform';
