// The contract floor's "approval service": the two external hops the public contract requires of it, made with plain
// node:http and nothing else (no state, policy, audit or auth). It takes each request off the contract floor's
// request queue and pushes it to every open `GET /inbox/events` stream (SSE, the same event shape as the inbox's),
// and `POST /approvals/:requestId/decisions` adds the decision job. Started by the bench as a child process.
import { createServer, type ServerResponse } from 'node:http';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import {
  FLOOR_QUEUE_OPTIONS,
  REMOVE_ON_COMPLETE,
  type FloorJob,
  FloorJobName,
  floorJobIds,
  FloorQueue as queues,
  parsesAsJson,
} from './floor-worker';

const DECISION_PATH = /^\/approvals\/([^/]+)\/decisions$/;

async function main(): Promise<void> {
  const prefix = process.env.QUEUE_PREFIX!;
  const concurrency = Number(process.env.CONCURRENCY ?? 16);
  const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    maxRetriesPerRequest: null,
  });
  const decisions = new Queue(queues.Decisions, { connection, prefix, ...FLOOR_QUEUE_OPTIONS });
  const streams = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/inbox/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    // The request ID is the run's one call ID, which is the run ID (see FloorJob): nothing to look up.
    const decided = req.method === 'POST' ? DECISION_PATH.exec(req.url ?? '') : null;
    if (!decided) return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Parsed like any JSON door, then unused; a body that is not JSON is refused, never crashes the stand-in.
      if (!parsesAsJson(Buffer.concat(chunks))) return void res.writeHead(400).end();
      const callId = decided[1]; // a UUID: nothing to decode (and nothing that could throw)
      const job: FloorJob = { runId: callId, callId };
      decisions.add(FloorJobName.Decision, job, { jobId: floorJobIds.decision(callId) }).then(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"recorded"}'),
        () => res.writeHead(503).end(),
      );
    });
  });

  const requests = new Worker<FloorJob>(
    queues.Requests,
    async (job) => {
      const { callId } = job.data;
      const event = `event: change\ndata: ${JSON.stringify({ requestId: callId, callId, status: 'pending' })}\n\n`;
      for (const stream of streams) stream.write(event);
    },
    { connection, prefix, concurrency, removeOnComplete: { ...REMOVE_ON_COMPLETE } },
  );
  await Promise.all([requests.waitUntilReady(), decisions.waitUntilReady()]);
  await new Promise<void>((done) => server.listen(Number(process.env.PORT), '127.0.0.1', done));
  process.send?.({ ready: true });

  const stop = async () => {
    for (const stream of streams) stream.end();
    server.close();
    await Promise.all([requests.close(), decisions.close()]);
    connection.disconnect();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

if (require.main === module) void main();
