// A separate plain-Node process (no ts-node, no Nest) that guards one call with the compiled @countersign/sdk and
// prints its result as one JSON line. The tool appends this process's ID to COUNTER_FILE: the count of runs.
// Environment: SDK_DIR (the built package), COUNTERSIGN_URL, COUNTERSIGN_TOKEN, CALL (JSON), COUNTER_FILE.
'use strict';
const { appendFileSync } = require('node:fs');
const { CountersignClient } = require(process.env.SDK_DIR);

const client = new CountersignClient({
  baseUrl: process.env.COUNTERSIGN_URL,
  token: process.env.COUNTERSIGN_TOKEN,
});
const call = JSON.parse(process.env.CALL);
process.stdout.write(`guarding ${call.callId}\n`);
client
  .guard(
    call,
    async () => {
      appendFileSync(process.env.COUNTER_FILE, `${process.pid}\n`);
      return 'ran';
    },
    { timeoutMs: Number(process.env.TIMEOUT_MS ?? 20000) },
  )
  .then((result) => {
    // What the process loaded: a framework or Redis client here would mean the SDK is not plain Node.
    const heavy = Object.keys(require.cache).filter((path) =>
      /node_modules[\\/](@nestjs|ioredis|bullmq|express)[\\/]/.test(path),
    );
    process.stdout.write(
      `${JSON.stringify({ status: result.status, approvalId: result.approvalId, heavy })}\n`,
    );
  })
  .catch((error) => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  });
