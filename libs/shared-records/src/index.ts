// @countersign/shared-records: the Redis records the worker and the approval service share: who may read a run,
// what each tool definition is, and what became of a decided call.
export * from './run-readers-store';
export * from './tool-definitions-store';
