// Injection token of the instance's logger (pino), given by bootstrap.
export const WORKER_LOGGER = Symbol('WorkerLogger');
