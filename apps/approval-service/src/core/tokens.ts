/** Injection tokens of values that are not classes. */
export const LOGGER = Symbol('Logger');
/** The service's ApprovalKeys (KEY_PREFIX, APPROVAL_SHARDS), built once in the module. */
export const APPROVAL_KEYS = Symbol('ApprovalKeys');
