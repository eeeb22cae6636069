// Where the OpenAI Agents adapter keeps a parked run between processes: its serialized RunState and which Countersign
// approval each interruption waits for. Pluggable; a directory of JSON files and a memory store come with it.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

export const ParkedRunSchema = z.object({
  version: z.literal(1),
  runId: z.string().min(1),
  /** The agent the run was parked with (the same agent must resume it). */
  agent: z.string(),
  /** RunState.toString(). */
  state: z.string().min(1),
  /** One per interruption: the approval it waits for, and the fingerprint of the call as it was submitted. */
  approvals: z.array(
    z.object({
      callId: z.string().min(1),
      toolName: z.string().min(1),
      approvalId: z.string().min(1),
      fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
  parkedAt: z.string(),
});
export type ParkedRun = z.infer<typeof ParkedRunSchema>;

export interface ParkedRunStore {
  save(run: ParkedRun): Promise<void>;
  /** undefined when no run of that ID is parked. */
  load(runId: string): Promise<ParkedRun | undefined>;
  delete(runId: string): Promise<void>;
}

/** One JSON file per run in `dir`, replaced atomically (written beside it, then renamed). */
export class FileParkedRunStore implements ParkedRunStore {
  constructor(private readonly dir: string) {}

  async save(run: ParkedRun): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const path = this.path(run.runId);
    const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temporary, JSON.stringify(ParkedRunSchema.parse(run)));
    await rename(temporary, path);
  }

  async load(runId: string): Promise<ParkedRun | undefined> {
    let text: string;
    try {
      text = await readFile(this.path(runId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return ParkedRunSchema.parse(JSON.parse(text));
  }

  async delete(runId: string): Promise<void> {
    await rm(this.path(runId), { force: true });
  }

  /** Run IDs become file names whatever they hold (no separators, no `..`). */
  private path(runId: string): string {
    return join(this.dir, `run-${encodeURIComponent(runId).replace(/\./g, '%2E')}.json`);
  }
}

/** For tests and single-process use: parked runs live as long as the process. */
export class MemoryParkedRunStore implements ParkedRunStore {
  private readonly runs = new Map<string, string>();

  async save(run: ParkedRun): Promise<void> {
    this.runs.set(run.runId, JSON.stringify(ParkedRunSchema.parse(run)));
  }

  async load(runId: string): Promise<ParkedRun | undefined> {
    const text = this.runs.get(runId);
    return text === undefined ? undefined : ParkedRunSchema.parse(JSON.parse(text));
  }

  async delete(runId: string): Promise<void> {
    this.runs.delete(runId);
  }
}
