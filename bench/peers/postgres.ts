// The LangGraph peer's PostgreSQL: a database of the bench's own on the local server (created here, dropped at the
// end), and the server processes ("backends") that serve the peer's connections, found by their application_name,
// so their CPU counts like Redis's does for the others.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { withoutPassword as redact } from '../support/cli';

export interface PeerDatabase {
  /** The connection string of the bench's database, for the peer worker. */
  url: string;
  /** The application_name the peer's connections carry. */
  applicationName: string;
  /** PIDs of the backends serving the peer's connections right now. */
  backendPids(): Promise<number[]>;
  /** Drops the database (the peer worker must have stopped), and closes the bench's own connection. */
  drop(): Promise<void>;
}

/** A database on the server of `adminUrl`, or the reason there is none (the server absent, no right to create one). */
export async function createPeerDatabase(adminUrl: string): Promise<PeerDatabase | { skipped: string }> {
  const admin = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 3_000 });
  admin.on('error', () => undefined); // a server that goes away mid-bench: the queries below fail instead
  try {
    await admin.connect();
  } catch (error) {
    return { skipped: `PostgreSQL unreachable at ${redact(adminUrl)} (${(error as Error).message})` };
  }
  const tag = randomBytes(4).toString('hex');
  const database = `countersign_bench_${tag}`;
  const applicationName = `countersign-bench-langgraph-${tag}`;
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } catch (error) {
    await admin.end();
    return { skipped: `cannot create a database at ${redact(adminUrl)} (${(error as Error).message})` };
  }
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return {
    url: url.toString(),
    applicationName,
    async backendPids() {
      const { rows } = await admin.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      return rows.map((row) => row.pid);
    },
    async drop() {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
