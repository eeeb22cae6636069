// `npm run bench:monitor -- --breakdown`'s tabulation (bench/support/breakdown.ts) on commands as MONITOR shows them:
// a script known by its SHA (BullMQ's, our own), the commands it ran inside Lua counted with it, a plain command by
// its key, the RESP size of what a client sent. (No Redis needed.)
import { createHash } from 'node:crypto';
import { loadLua } from '@countersign/platform';
import { tabulate } from '../bench/support/breakdown';

const sha = (text: string) => createHash('sha1').update(text).digest('hex');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bullmqScripts = require('bullmq/dist/cjs/scripts') as Record<string, { content: string }>;
const bullmqAdd = sha(bullmqScripts.addStandardJob!.content);
const auditAppend = sha(loadLua(`${__dirname}/../libs/audit/src`, 'audit-append-2.lua'));

it('puts each command down to its origin, per run, with the commands its script ran and the bytes sent', () => {
  const client = '127.0.0.1:5000';
  const rows = tabulate(
    [
      { client, command: 'evalsha', args: [bullmqAdd, '9', '{countersign}:agent-runs:wait', 'x'] },
      { client: 'lua', command: 'incr', args: ['{countersign}:agent-runs:id'] },
      { client: 'lua', command: 'xadd', args: ['{countersign}:agent-runs:events'] },
      {
        client,
        command: 'evalsha',
        args: [auditAppend, '2', '{countersign:audit}:stream', '{countersign:audit}:heads'],
      },
      { client: 'lua', command: 'xadd', args: ['{countersign:audit}:stream'] },
      {
        client,
        command: 'hmget',
        args: ['{countersign:approvals}:request:rAbCdEfGhIjKlMnOp', 'callId', 'groups'],
      },
      { client, command: 'info', args: ['commandstats'] },
    ],
    2,
  );
  const row = (origin: string) => rows.find((r) => r.origin === origin);
  expect(row('BullMQ agent-runs')).toMatchObject({
    detail: 'addStandardJob',
    sent: 0.5,
    inLua: 1,
    luaCommands: { incr: 0.5, xadd: 0.5 },
  });
  expect(row('audit appends')).toMatchObject({ detail: 'audit-append', sent: 0.5, inLua: 0.5 });
  expect(row('approvals')).toMatchObject({ detail: 'hmget {countersign:approvals}:request:*', sent: 0.5 });
  // INFO is the readings' own command: left out, as the bench's counts leave it out.
  expect(rows.map((r) => r.origin).sort()).toEqual(['BullMQ agent-runs', 'approvals', 'audit appends']);
  // *4 $5 hmget $<key> <key> $6 callId $6 groups, halved over 2 runs.
  const key = '{countersign:approvals}:request:rAbCdEfGhIjKlMnOp';
  expect(row('approvals')!.bytes).toBe((4 + 11 + (1 + 2 + 2 + key.length + 2) + 12 + 12) / 2);
});
