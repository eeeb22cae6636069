// Runs after every reliability spec file: a scenario that timed out must not leave worker processes
// running (they would keep the test run alive and spin against a Redis that is gone).
import { killAllWorkerProcesses } from './worker-processes';

afterAll(() => killAllWorkerProcesses());
