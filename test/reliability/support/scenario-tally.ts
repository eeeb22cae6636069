// The one-line summary every scenario prints: cases tried, refused as expected, executed wrongly, lost.
// Executed wrongly and lost must be zero; `expectClean()` asserts it and names the offending cases.

export class ScenarioTally {
  tried = 0;
  refused = 0;
  completed = 0;
  readonly executedWrongly: string[] = [];
  readonly lost: string[] = [];
  private readonly started = Date.now();

  constructor(readonly scenario: string) {}

  case(): void {
    this.tried++;
  }

  refusedAsExpected(): void {
    this.refused++;
  }

  wronglyExecuted(what: string): void {
    this.executedWrongly.push(what);
  }

  lostRun(what: string): void {
    this.lost.push(what);
  }

  line(): string {
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    return (
      `[reliability] ${this.scenario}: tried=${this.tried} refused_as_expected=${this.refused} ` +
      `completed=${this.completed} executed_wrongly=${this.executedWrongly.length} lost=${this.lost.length} (${seconds}s)`
    );
  }

  /** Prints the summary line and asserts the zeros. */
  expectClean(): void {
    process.stdout.write(this.line() + '\n');
    expect({ executedWrongly: this.executedWrongly.slice(0, 20), lost: this.lost.slice(0, 20) }).toEqual({
      executedWrongly: [],
      lost: [],
    });
  }
}
