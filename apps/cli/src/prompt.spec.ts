import { PassThrough } from 'node:stream';
import { LinePrompt } from './prompt';

/** A prompt reading `input` (lines piped in before the questions, as from a script) and what it wrote. */
function promptOver(input: string): { prompt: LinePrompt; written: () => string } {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let written = '';
  stdout.on('data', (chunk: Buffer) => (written += chunk.toString()));
  stdin.end(input);
  return { prompt: new LinePrompt(stdin, stdout), written: () => written };
}

describe('LinePrompt', () => {
  it('asks yes/no again until the answer is y or n, in any case and spacing', async () => {
    const { prompt, written } = promptOver('maybe\n  YES \nn\n');
    await expect(prompt.yesNo('Go?')).resolves.toBe(true);
    await expect(prompt.yesNo('Sure?')).resolves.toBe(false);
    expect(written()).toBe('Go? Please answer y or n.\nGo? Sure? ');
    prompt.close();
  });

  it('takes a choice or its first letter, asking again after anything else', async () => {
    const { prompt, written } = promptOver('x\nD\napprove\n');
    await expect(prompt.choose('Decide?', ['approve', 'deny'] as const)).resolves.toBe('deny');
    await expect(prompt.choose('Again?', ['approve', 'deny'] as const)).resolves.toBe('approve');
    expect(written()).toBe('Decide? Please answer a, d.\nDecide? Again? ');
    prompt.close();
  });

  it('answers undefined when stdin closes without an answer', async () => {
    const { prompt, written } = promptOver('nope\n');
    await expect(prompt.yesNo('Go?')).resolves.toBeUndefined();
    await expect(prompt.choose('Decide?', ['approve', 'deny'] as const)).resolves.toBeUndefined();
    expect(written()).toBe('Go? Please answer y or n.\nGo? \nDecide? \n');
  });
});
