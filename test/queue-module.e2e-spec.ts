// The queue module both apps use (libs/platform/src/queues), on its own against the real Redis: start-up checks of
// the job catalog, validation, retries and failed-for-good, per-instance worker settings, and shutdown order.
import { getQueueToken } from '@nestjs/bullmq';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  ApprovalServiceJobName as Name,
  ApprovalServiceQueueName,
  JobName,
  jobsOn,
} from '@countersign/contracts';
import {
  createLogger,
  type JobCatalog,
  MissingJobHandlerError,
  provideJobCatalog,
  QueueModule,
  QueueWorkers,
  RedisConnections,
  type WorkerSettings,
} from '@countersign/platform';
import {
  deletePrefixedKeys,
  TEST_REDIS_URL,
  type TestPrefixes,
  uniquePrefixes,
  waitFor,
} from './support/redis';

const QUEUE = ApprovalServiceQueueName.Notifications;
type Catalog = JobCatalog<typeof QUEUE>;

interface Started {
  app: INestApplication;
  queue: Queue;
  connections: RedisConnections;
  workers: QueueWorkers;
}

const prefixes: TestPrefixes[] = [];
const apps: INestApplication[] = [];
let redis: Redis;

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});

afterEach(async () => {
  await Promise.allSettled(apps.splice(0).map((app) => app.close()));
});

afterAll(async () => {
  await redis.quit();
  await Promise.all(prefixes.map((p) => deletePrefixedKeys(p)));
});

/**
 * Builds an app of just the module on a fresh prefix, not initialised yet (`init` starts the workers). An app, as
 * the services are: unlike a bare testing module, it still closes after a failed init.
 */
async function compile(
  catalog: unknown,
  worker: WorkerSettings = { concurrency: 4 },
  retry = { attempts: 3, backoffMs: 10 },
): Promise<Started> {
  const p = uniquePrefixes('queue-module');
  prefixes.push(p);
  const moduleRef = await Test.createTestingModule({
    imports: [
      QueueModule.forRoot({
        service: 'queue-module-test',
        env: { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: p.queuePrefix },
        logger: createLogger('queue-module-test', 'silent'),
        produces: { [QUEUE]: retry },
        consumes: { [QUEUE]: worker },
      }),
    ],
    providers: [provideJobCatalog<typeof QUEUE, []>(() => catalog as Catalog, [])],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  apps.push(app);
  return {
    app,
    queue: app.get<Queue>(getQueueToken(QUEUE)),
    connections: app.get(RedisConnections),
    workers: app.get(QueueWorkers),
  };
}

async function start(
  catalog: Catalog,
  worker?: WorkerSettings,
  retry?: { attempts: number; backoffMs: number },
) {
  const started = await compile(catalog, worker, retry);
  await started.app.init();
  return started;
}

/** A catalog whose three handlers record what they were given and do what `behave` says. */
function recordingCatalog(behave: (job: Job) => Promise<void> = async () => undefined) {
  const handled: { name: string; payload: unknown }[] = [];
  const failedForGood: { id?: string; attemptsMade: number; error: string }[] = [];
  const handler = () => ({
    handle: async (payload: unknown, job: Job) => {
      handled.push({ name: job.name, payload });
      await behave(job);
    },
    failedForGood: async (job: Job, error: Error) => {
      failedForGood.push({ id: job.id, attemptsMade: job.attemptsMade, error: error.message });
    },
  });
  // One handler for every job the queue carries (the catalog the compiler checks lists them all).
  const catalog = Object.fromEntries(jobsOn(QUEUE).map((name) => [name, handler()])) as unknown as Catalog;
  return { catalog, handled, failedForGood };
}

/** How the refusal names missing handlers: `"<job>" (queue <queue>)`, in catalog order. */
function missingText(names: string[]): string {
  return names.map((name) => `"${name}" (queue ${QUEUE})`).join(', ');
}

async function settled(queue: Queue, id: string): Promise<'completed' | 'failed'> {
  return waitFor(async () => {
    const state = await queue.getJobState(id);
    return state === 'completed' || state === 'failed' ? state : undefined;
  }, `job ${id} to settle`);
}

/** Closes an app in the test itself (afterEach closes the others). */
function closeNow(app: INestApplication): Promise<void> {
  apps.splice(apps.indexOf(app), 1);
  return app.close();
}

/** Every connection quit (ioredis says `end` once the socket has closed, just after QUIT is answered). */
async function allEnded(connections: RedisConnections): Promise<void> {
  const all = [connections.commands, connections.subscriber, connections.producers, connections.workers];
  await waitFor(() => all.every((c) => c.status === 'end'), 'every connection closed', 2_000);
}

/** A promise the test resolves when it likes. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('queue module', () => {
  it.each([
    [
      'a job of a consumed queue has no handler',
      { [Name.NotifySlack]: { handle: async () => undefined } },
      missingText(jobsOn(QUEUE).filter((name) => name !== Name.NotifySlack)),
    ],
    ['the app provides no catalog at all', undefined, missingText(jobsOn(QUEUE))],
  ])(
    'refuses to start, naming the jobs to add, when %s, and leaves nothing connected',
    async (_, catalog, jobs) => {
      const { app, connections } = await compile(catalog);
      // Connected first: ioredis keeps a socket that is still connecting alive for 2 s after QUIT.
      const all = [connections.commands, connections.subscriber, connections.producers, connections.workers];
      await waitFor(() => all.every((c) => c.status === 'ready'), 'connected');
      const refusal = app.init();
      await expect(refusal).rejects.toThrow(MissingJobHandlerError);
      await expect(refusal).rejects.toThrow(
        `queue-module-test: no handler for job ${jobs}; add one to the job catalog that the app provides with ` +
          'provideJobCatalog()',
      );
      await closeNow(app);
      await allEnded(connections);
    },
  );

  it('hands each job its payload parsed against its contract, on the connections meant for it', async () => {
    const { catalog, handled } = recordingCatalog();
    const { queue, connections, workers } = await start(catalog);
    // Producers share their own auto-pipelined connection; workers a blocking-safe one.
    expect((await queue.backend.client).options).toBe(connections.producers.options);
    expect(connections.producers.options).toMatchObject({ enableAutoPipelining: true });
    expect(connections.workers.options).toMatchObject({
      maxRetriesPerRequest: null,
      enableAutoPipelining: false,
    });
    expect(workers.isRunning()).toBe(true);

    const job = await queue.add(Name.NotifyEmail, {
      requestId: 'rq-1',
      callId: 'call-1',
      attempt: 0,
      approver: 'bob',
      extra: 1,
    });
    expect(await settled(queue, job.id!)).toBe('completed');
    expect(handled).toEqual([
      {
        name: Name.NotifyEmail,
        // Unknown fields dropped, defaults filled in (`rev`: the email is about the arguments as asked).
        payload: { requestId: 'rq-1', callId: 'call-1', attempt: 0, approver: 'bob', rev: 0 },
      },
    ]);
    // Retries come from the producer's settings; retention is the workers' option, not stored in the job.
    const stored = (await queue.getJob(job.id!))!;
    expect(stored.opts).toMatchObject({ attempts: 3, backoff: { type: 'exponential', delay: 10 } });
    expect(stored.opts).not.toHaveProperty('removeOnComplete');
    expect(stored.opts).not.toHaveProperty('removeOnFail');
  });

  it('keeps finished jobs by count only: one finished more than an hour ago still deduplicates its ID', async () => {
    const { catalog, handled } = recordingCatalog();
    const { queue } = await start(catalog);
    const payload = { requestId: 'rq-old', callId: 'call-old', attempt: 0, approver: 'bob' };
    const old = await queue.add(Name.NotifyEmail, payload, { jobId: 'old-one' });
    expect(await settled(queue, old.id!)).toBe('completed');
    // As if it had finished two hours ago (BullMQ's age trim reads the completed set's scores).
    const completed = `${queue.qualifiedName}:completed`;
    await redis.zadd(completed, 'XX', Date.now() - 2 * 3_600_000, old.id!);
    // Another job finishing runs the trim.
    const next = await queue.add(
      Name.NotifyEmail,
      { ...payload, requestId: 'rq-next' },
      { jobId: 'next-one' },
    );
    expect(await settled(queue, next.id!)).toBe('completed');
    expect(await redis.zscore(completed, old.id!)).not.toBeNull();
    // The same ID added again is the same job: not run twice.
    await queue.add(Name.NotifyEmail, payload, { jobId: 'old-one' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(handled.filter((h) => (h.payload as { requestId: string }).requestId === 'rq-old')).toHaveLength(
      1,
    );
  });

  it('caps the queue event stream nobody reads at a few hundred entries', async () => {
    const { catalog } = recordingCatalog();
    const { queue } = await start(catalog, { concurrency: 16 });
    // Each Queue writes the cap into the queue's meta hash once it is connected; BullMQ's scripts read it there.
    await waitFor(
      async () => (await redis.hget(`${queue.qualifiedName}:meta`, 'opts.maxLenEvents')) === '100',
      'the cap in the meta hash',
    );
    const jobs = await queue.addBulk(
      Array.from({ length: 300 }, (_, i) => ({
        name: Name.NotifyEmail,
        data: { requestId: `rq-${i}`, callId: `call-${i}`, attempt: 0, approver: 'bob' },
      })),
    );
    await waitFor(
      async () => (await redis.zcard(`${queue.qualifiedName}:completed`)) === jobs.length,
      'every job completed',
    );
    // About 4 events per job (added, waiting, active, completed): 1,200 without the cap; `MAXLEN ~ 100` keeps whole
    // stream nodes of 100 entries.
    expect(await redis.xlen(`${queue.qualifiedName}:events`)).toBeLessThan(400);
  });

  it('fails an invalid payload for good at once, naming the field, keeps it in the failed set, and settles it once', async () => {
    const { catalog, handled, failedForGood } = recordingCatalog();
    const { queue } = await start(catalog);
    const job = await queue.add(Name.NotifySlack, { callId: 'call-2', attempt: 'first', group: 'ops' });
    expect(await settled(queue, job.id!)).toBe('failed');
    const failed = (await queue.getJob(job.id!))!;
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(/invalid notify\.slack message: .*attempt: .*channel: /);
    expect(handled).toEqual([]);
    await waitFor(() => failedForGood.length === 1, 'failedForGood');
    expect(failedForGood).toEqual([{ id: job.id, attemptsMade: 1, error: failed.failedReason }]);
  });

  it.each([
    [
      'a job name of another queue',
      JobName.Decision,
      'job "approval.decision" does not belong on queue approval-notifications',
    ],
    [
      'an unknown job name',
      'notify.pigeon',
      'no handler for job "notify.pigeon" on queue approval-notifications',
    ],
  ])('fails %s for good, saying so', async (_, name, reason) => {
    const { catalog, handled } = recordingCatalog();
    const { queue } = await start(catalog);
    const job = await queue.add(name, { requestId: 'rq-3', callId: 'call-3', attempt: 0 });
    expect(await settled(queue, job.id!)).toBe('failed');
    expect((await queue.getJob(job.id!))!.failedReason).toBe(reason);
    expect(handled).toEqual([]);
  });

  it('retries a job that throws, and calls failedForGood once, after its last attempt', async () => {
    let throws = 0;
    const { catalog, handled, failedForGood } = recordingCatalog(async () => {
      throws++;
      throw new Error(`Slack is down (${throws})`);
    });
    const { queue } = await start(catalog, { concurrency: 4 }, { attempts: 3, backoffMs: 10 });
    const job = await queue.add(Name.ShowOutcome, { requestId: 'rq-4', callId: 'call-4', attempt: 0 });
    expect(await settled(queue, job.id!)).toBe('failed');
    expect(handled).toHaveLength(3);
    await waitFor(() => failedForGood.length > 0, 'failedForGood');
    await new Promise((resolve) => setTimeout(resolve, 100)); // a second call would have come by now
    expect(failedForGood).toEqual([{ id: job.id, attemptsMade: 3, error: 'Slack is down (3)' }]);
  });

  it('does not call failedForGood for a job that succeeds on a retry', async () => {
    let calls = 0;
    const { catalog, failedForGood } = recordingCatalog(async () => {
      if (++calls < 3) throw new Error('not yet');
    });
    const { queue } = await start(catalog, { concurrency: 4 }, { attempts: 3, backoffMs: 10 });
    const job = await queue.add(Name.ShowOutcome, { requestId: 'rq-5', callId: 'call-5', attempt: 0 });
    expect(await settled(queue, job.id!)).toBe('completed');
    expect(calls).toBe(3);
    expect(failedForGood).toEqual([]);
  });

  it('runs two instances in one process, each with the worker settings it was given', async () => {
    const blocked = gate();
    const instances = await Promise.all(
      [
        { concurrency: 1, lockDurationMs: 4_000 },
        { concurrency: 3, lockDurationMs: 20_000 },
      ].map(async (worker) => {
        const active = { now: 0, max: 0 };
        const { catalog } = recordingCatalog(async () => {
          active.now++;
          active.max = Math.max(active.max, active.now);
          await blocked.opened;
          active.now--;
        });
        return { worker, active, ...(await start(catalog, worker)) };
      }),
    );
    for (const { queue } of instances) {
      await queue.addBulk(
        Array.from({ length: 5 }, (_, i) => ({
          name: Name.ShowOutcome,
          data: { requestId: `rq-${i}`, callId: `call-${i}`, attempt: 0 },
        })),
      );
    }
    for (const { active, worker } of instances)
      await waitFor(() => active.now === worker.concurrency, `${worker.concurrency} job(s) active`);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a worker allowed more would have taken more by now

    for (const { active, worker, queue } of instances) {
      expect(active.max).toBe(worker.concurrency);
      const [job] = await queue.getActive();
      // A lock is renewed every half of its duration: its time to live tells the lock duration apart.
      const lockTtl = await redis.pttl(`${queue.opts.prefix}:${QUEUE}:${job.id}:lock`);
      expect(lockTtl).toBeLessThanOrEqual(worker.lockDurationMs);
      expect(lockTtl).toBeGreaterThan(worker.lockDurationMs / 4);
    }
    blocked.open();
    for (const { queue } of instances)
      await waitFor(async () => (await queue.getCompletedCount()) === 5, 'every job completed');
  });

  it('closes the workers first on shutdown: the job in flight finishes, then queues and connections close', async () => {
    const release = gate();
    const startedJob = gate();
    // Known once started; the handler runs after that.
    const at: { connections?: RedisConnections; finishedKey?: string } = {};
    const { catalog } = recordingCatalog(async (job) => {
      startedJob.open();
      await release.opened;
      await at.connections!.commands.set(at.finishedKey!, job.id!);
    });
    const started = await start(catalog);
    const { connections } = started;
    const finishedKey = `${started.queue.opts.prefix}:finished`;
    Object.assign(at, { connections, finishedKey });
    const job = await started.queue.add(Name.ShowOutcome, {
      requestId: 'rq-6',
      callId: 'call-6',
      attempt: 0,
    });
    await startedJob.opened;

    let closed = false;
    const closing = closeNow(started.app).then(() => (closed = true));
    let addedWhileClosing: Job;
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(closed).toBe(false); // waits for the job in flight
      expect(connections.commands.status).toBe('ready');
      addedWhileClosing = await started.queue.add(Name.ShowOutcome, {
        requestId: 'rq-7',
        callId: 'call-7',
        attempt: 0,
      });
    } finally {
      release.open();
    }
    await closing;
    expect(await redis.get(finishedKey)).toBe(job.id);
    const key = (name: string) => `${started.queue.opts.prefix}:${QUEUE}:${name}`;
    expect(await redis.zscore(key('completed'), job.id!)).not.toBeNull();
    // Left waiting for another worker: a closing worker takes no new job.
    expect(await redis.lrange(key('wait'), 0, -1)).toEqual([addedWhileClosing.id]);
    expect(started.workers.isRunning()).toBe(false);
    await allEnded(connections);
  });
});
