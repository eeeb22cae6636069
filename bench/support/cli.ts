// Command-line plumbing of the bench scripts: `--help` before any work, flags checked by name, and a one-line error
// with exit code 2 for what the user can fix (a bad flag, a Redis that cannot be reached), instead of a stack trace
// or ioredis retrying forever.
import { Redis } from 'ioredis';

export const EXIT_USAGE = 2;

/** A mistake of the caller's or of the machine's set-up: printed as one line, exit 2. */
export class BenchSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
}

export const wantsHelp = (argv: string[]) => argv.includes('--help') || argv.includes('-h');

/**
 * Refuses a flag the script does not know (a typo would otherwise be ignored silently) and a value flag without its
 * value. `flags` take no value; `values` take the next argument.
 */
export function checkFlags(argv: string[], known: { flags: string[]; values: string[] }): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const name = arg.replace(/^--/, '');
    if (known.values.includes(name)) {
      if (argv[i + 1] === undefined || argv[i + 1].startsWith('--'))
        throw new BenchSetupError(`${arg} needs a value`);
      i++;
    } else if (!known.flags.includes(name)) {
      throw new BenchSetupError(`unknown argument "${arg}" (--help lists them)`);
    }
  }
}

/** A connection URL without its password, for messages and the results file. */
export function withoutPassword(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(an unparsable URL)';
  }
}

/** Connects once, without retrying, and PINGs; a refusal or timeout is a BenchSetupError naming the URL. */
export async function reachRedis(url: string, timeoutMs = 3_000): Promise<void> {
  let probe: Redis;
  try {
    probe = new Redis(url, {
      lazyConnect: true,
      connectTimeout: timeoutMs,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
  } catch (error) {
    throw new BenchSetupError(
      `Redis URL "${withoutPassword(url)}" is not valid: ${(error as Error).message}`,
    );
  }
  // The socket's own error (ECONNREFUSED, ENOTFOUND) says more than connect()'s "Connection is closed".
  let cause: Error | undefined;
  probe.on('error', (error: Error) => (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    throw new BenchSetupError(
      `Redis at ${withoutPassword(url)} is unreachable (${(cause ?? (error as Error)).message})`,
    );
  } finally {
    probe.disconnect();
  }
}

/**
 * Runs a script's main: exit 0 (or the exit code it set), 2 with one line for a BenchSetupError, 1 with the stack
 * for anything else.
 */
export function runMain(script: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(process.exitCode ?? 0),
    (error: Error) => {
      if (error instanceof BenchSetupError) {
        console.error(`[${script}] ${error.message}`);
        process.exit(EXIT_USAGE);
      }
      console.error(`[${script}] failed: ${error.stack ?? error.message}`);
      process.exit(1);
    },
  );
}
