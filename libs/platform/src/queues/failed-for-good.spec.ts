import { type Job, UnrecoverableError } from 'bullmq';
import { isFailedForGood, isLastAttempt } from './failed-for-good';

const job = (attemptsMade: number, attempts?: number) =>
  ({ attemptsMade, opts: attempts === undefined ? {} : { attempts } }) as unknown as Job;

/** As BullMQ itself decides (Job.shouldRetryJob): retried, or kept in the failed set. */
describe('isFailedForGood', () => {
  it.each([
    ['an error with attempts left', job(1, 3), new Error('model provider down'), false],
    ['an error on the last attempt', job(3, 3), new Error('model provider down'), true],
    ['an error of a job added without attempts', job(1), new Error('boom'), true],
    ['an UnrecoverableError with attempts left', job(1, 5), new UnrecoverableError('invalid message'), true],
    [
      'the error BullMQ fails a job with that stalled too often',
      job(1, 3),
      Object.assign(new Error('job stalled more than allowable limit'), { name: 'UnrecoverableError' }),
      true,
    ],
  ])('%s', (_, failed, error, expected) => {
    expect(isFailedForGood(failed, error)).toBe(expected);
  });
});

describe('isLastAttempt', () => {
  it.each([
    ['the first of three attempts', job(0, 3), false],
    ['the second of three attempts', job(1, 3), false],
    ['the third of three attempts', job(2, 3), true],
    ['the only attempt of a job added without attempts', job(0), true],
  ])('%s', (_, running, expected) => {
    expect(isLastAttempt(running)).toBe(expected);
  });
});
