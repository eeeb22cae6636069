// Bookkeeping shared by the round-trip and floor phases: when each decision was sent, when its tool ran,
// how many runs finished, and a stall guard that fails the phase with the counts instead of hanging.
import type { Child } from './processes';
import type { ProbeEvent } from './worker-probe';
import { Latencies, wallNow } from './measure';

export class Flow {
  readonly decisionToExecution = new Latencies();
  /** callId → wall time at which the approver stand-in sent its decision. */
  readonly sentAt = new Map<string, number>();
  executed = 0;
  done = 0;
  failed = 0;
  firstStartAt = 0;
  lastDoneAt = 0;
  private lastProgressAt = wallNow();
  private finish!: () => void;
  private fail!: (error: Error) => void;
  readonly finished = new Promise<void>((done, fail) => {
    this.finish = done;
    this.fail = fail;
  });
  private readonly detach: (() => void)[] = [];
  /** Runs that finished before anyone waited for them, and waiters for runs that have not yet. */
  private readonly doneRuns = new Set<string>();
  private readonly waiters = new Map<string, () => void>();

  constructor(
    private readonly runs: number,
    private readonly executedTool: string,
    private readonly onProgress: (done: number) => void,
    private readonly stallMs = 60_000,
    private readonly describe: () => string = () => '',
  ) {
    this.finished.catch(() => undefined); // awaited by the phase; this only silences an early rejection
    const guard = setInterval(() => {
      if (wallNow() - this.lastProgressAt > this.stallMs) {
        this.fail(new Error(`no progress for ${this.stallMs} ms: ${this.counts()} ${this.describe()}`));
      }
    }, 1_000);
    this.detach.push(() => clearInterval(guard));
  }

  watch(children: Child[]): void {
    for (const child of children) {
      const listener = (event: ProbeEvent) => this.onProbe(event);
      child.on('probe', listener);
      this.detach.push(() => child.off('probe', listener));
      const exit = () => this.fail(new Error(`${child.name} exited mid-phase:\n${child.output()}`));
      child.proc.once('exit', exit);
      this.detach.push(() => child.proc.off('exit', exit));
    }
  }

  markStart(): void {
    if (!this.firstStartAt) this.firstStartAt = wallNow();
  }

  progressed(): void {
    this.lastProgressAt = wallNow();
  }

  onProbe(event: ProbeEvent): void {
    if (event.t === 'exec') {
      if (event.tool !== this.executedTool) return;
      const sent = this.sentAt.get(event.callId);
      if (sent === undefined) return;
      this.executed++;
      this.decisionToExecution.recordMs(event.at - sent);
      return;
    }
    this.done++;
    const waiter = this.waiters.get(event.runId);
    if (waiter) {
      this.waiters.delete(event.runId);
      waiter();
    } else this.doneRuns.add(event.runId);
    if (event.status !== 'completed') this.failed++;
    this.lastDoneAt = Math.max(this.lastDoneAt, event.at);
    this.progressed();
    this.onProgress(this.done);
    if (this.done >= this.runs) this.finish();
  }

  /** Resolves when the run finished (the probe's `done`), even if that happened before the call. */
  runDone(runId: string): Promise<void> {
    if (this.doneRuns.delete(runId)) return Promise.resolve();
    return new Promise((done) => this.waiters.set(runId, done));
  }

  counts(): string {
    return `runs done ${this.done}/${this.runs}, decisions sent ${this.sentAt.size}, tools executed ${this.executed}`;
  }

  get seconds(): number {
    return (this.lastDoneAt - this.firstStartAt) / 1000;
  }

  close(): void {
    for (const d of this.detach.splice(0)) d();
  }
}
