/** Injection tokens of values that are not classes. */
export const LOGGER = Symbol('Logger');
