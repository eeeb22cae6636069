// The configuration reference (docs/reference/configuration.md) is generated from the zod schemas by
// scripts/config-reference.ts: the committed page must be exactly what they render now, and every variable and config
// key must say what it means. Rendered in memory: this test never writes the page. (No Redis or network needed.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { DurationSchema } from '@countersign/platform';
import {
  allRows,
  descriptionOf,
  envRows,
  envTable,
  fileTable,
  formattedConfigReference,
  REFERENCE_PATH,
} from '../scripts/config-reference';

/** The first line where two texts differ, both versions, for a failure message a reader can act on. */
function firstDifference(committed: string, rendered: string): string {
  const a = committed.split('\n');
  const b = rendered.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}:\n  committed: ${a[at] ?? '(end of file)'}\n  rendered:  ${b[at] ?? '(end of file)'}`;
}

it('the committed configuration reference is what the schemas render', async () => {
  const committed = readFileSync(join(__dirname, '..', REFERENCE_PATH), 'utf8');
  const rendered = await formattedConfigReference();
  if (committed !== rendered) {
    throw new Error(
      `${REFERENCE_PATH} differs from what the zod schemas render: run \`npm run docs:config\` and commit it ` +
        `(${firstDifference(committed, rendered)})`,
    );
  }
  expect(committed).toContain('## Agent worker');
});

it('every variable and config key of every service has a description', () => {
  const missing = allRows()
    .filter((row) => !row.described)
    .map((row) => `${row.section}: ${row.key} (add .describe() to its schema)`);
  expect(missing).toEqual([]);
  expect(allRows().map((row) => row.key)).toEqual(
    expect.arrayContaining([
      'SEED_DEMO_INFRA',
      'RATE_LIMIT_EXTERNAL_SUBMISSIONS_USER',
      'MAX_SESSIONS_PER_PRINCIPAL',
    ]),
  );
});

describe('the generator', () => {
  it('finds a variable without a description', () => {
    const schema = z.object({
      DESCRIBED: z.string().describe('says what it is'),
      BARE: z.string().default('x'),
    });
    expect(
      envRows(schema)
        .filter((row) => !descriptionOf(row.schema))
        .map((row) => row.key),
    ).toEqual(['BARE']);
  });

  it('shows the default the schema applies, as it is written in the environment or the file', () => {
    const env = envTable(
      z.object({
        PORT: z.coerce.number().int().min(0).max(65_535).default(3000).describe('the port'),
        WINDOW: DurationSchema.prefault('90s').describe('a window'),
        SECRET: z.string().min(16).describe('a secret'),
      }),
    );
    expect(env).toMatch(/\| `PORT` \| `3000` \| integer 0–65535 \| the port \|/);
    expect(env).toMatch(/\| `WINDOW` \| `90s` \| a duration[^|]* \| a window \|/);
    expect(env).toMatch(/\| `SECRET` \| \*\*required\*\* \| ≥ 16 characters \| a secret \|/);
    const file = fileTable(
      z.object({ hold: z.object({ maxMs: z.number().default(45_000).describe('held') }) }),
    );
    expect(file).toMatch(/\| `hold\.maxMs` \| `45000` \| number \| held \|/);
  });

  it('refuses a default it cannot show as written (a parsed value, such as a duration in milliseconds)', () => {
    const schema = z.object({ EXPIRY: DurationSchema.default(60_000).describe('an expiry') });
    expect(() => envTable(schema)).toThrow(/EXPIRY: its default cannot be shown as written.*\.prefault/);
  });
});
