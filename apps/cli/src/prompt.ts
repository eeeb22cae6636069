// Line-by-line answers from stdin that also work when stdin is a pipe (lines may arrive before the question).
import { createInterface, type Interface } from 'node:readline';

export class LinePrompt {
  private readonly lines: string[] = [];
  private waiting?: (line: string | undefined) => void;
  private closed = false;
  private readonly rl: Interface;

  constructor(
    input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {
    this.rl = createInterface({ input, terminal: false });
    this.rl.on('line', (line) => {
      if (this.waiting) this.settle(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => {
      this.closed = true;
      this.settle(undefined);
    });
  }

  /** Asks until the answer is y or n; `undefined` when stdin closed without one. */
  yesNo(question: string): Promise<boolean | undefined> {
    return this.askUntil(question, 'Please answer y or n.', (answer) =>
      ['y', 'yes'].includes(answer) ? true : ['n', 'no'].includes(answer) ? false : undefined,
    );
  }

  /** Asks until the answer is one of `choices` (their first letters count too); `undefined` when stdin closed. */
  choose<C extends string>(question: string, choices: readonly C[]): Promise<C | undefined> {
    return this.askUntil(question, `Please answer ${choices.map((c) => c[0]).join(', ')}.`, (answer) =>
      choices.find((c) => c === answer || c[0] === answer),
    );
  }

  /** Asks until `read` makes something of the answer (trimmed, lower case), saying `again` after each it does not. */
  private async askUntil<T>(
    question: string,
    again: string,
    read: (answer: string) => T | undefined,
  ): Promise<T | undefined> {
    for (;;) {
      this.output.write(`${question} `);
      const line = await this.next();
      if (line === undefined) {
        this.output.write('\n');
        return undefined;
      }
      const found = read(line.trim().toLowerCase());
      if (found !== undefined) return found;
      this.output.write(`${again}\n`);
    }
  }

  /** One more line (for a reason); empty string when none. */
  async line(question: string): Promise<string> {
    this.output.write(`${question} `);
    return (await this.next())?.trim() ?? '';
  }

  close(): void {
    this.rl.close();
  }

  private next(): Promise<string | undefined> {
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  private settle(line: string | undefined): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(line);
  }
}
