// Injection tokens of the ops MCP server's values that are not classes (its config's token is in config/).
export const LOGGER = Symbol('Logger');
/** The server's one Redis connection: the simulated infrastructure. */
export const REDIS = Symbol('Redis');
