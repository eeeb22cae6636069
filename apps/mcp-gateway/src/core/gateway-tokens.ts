// Injection tokens of the gateway's values that are not classes (its settings' token is in config/gateway-settings.ts).
export const LOGGER = Symbol('Logger');
/** The gateway's one Redis connection: call records, audit, rate limits. */
export const REDIS = Symbol('Redis');
/** The gateway's own principal (GATEWAY_TOKEN): it submits the approvals, and is the agent of every call. */
export const GATEWAY_PRINCIPAL = Symbol('GatewayPrincipal');
