// The agent worker's HTTP API as the CLI and the demo use it: start a run, read it, follow its events.
import { RunEventSchema, type RunEvent, type RunView, type StartRunBody } from '@countersign/contracts';
import { CliError, ExitCode } from '../cli-error';
import { errorMessage, requestJson, unreachable } from './http';
import { readSse } from './sse';

const SERVICE = 'agent worker';

export interface InfraView {
  services: { name: string; status: string; replicas: number; restarts: number }[];
  volumes: { name: string; sizeGb: number }[];
}

export class WorkerClient {
  constructor(
    readonly baseUrl: string,
    /** Your API token: runs start in your name, and you read only runs you may see. */
    private readonly token: string | undefined,
  ) {}

  async startRun(body: StartRunBody): Promise<string> {
    const answer = await requestJson<{ runId: string }>(SERVICE, `${this.baseUrl}/runs`, {
      method: 'POST',
      token: this.requireToken(),
      body,
    });
    if (answer.status === 202) return answer.body.runId;
    refuseUnauthorized(answer.status, answer.body);
    if (answer.status === 400) {
      const message = errorMessage(answer.body);
      const code = /^agent: unknown agent/.test(message) ? ExitCode.NotFound : ExitCode.InvalidInput;
      throw new CliError(`the agent worker refused the run: ${message}`, code);
    }
    throw new CliError(
      `the agent worker answered ${answer.status}: ${errorMessage(answer.body)}`,
      ExitCode.Failure,
    );
  }

  /** POST /runbooks/:name/runs: `input` is the runbook's starting state (its channels by name). */
  async startRunbook(name: string, input: Record<string, unknown>, onBehalfOf?: string): Promise<string> {
    const answer = await requestJson<{ runId: string }>(
      SERVICE,
      `${this.baseUrl}/runbooks/${encodeURIComponent(name)}/runs`,
      { method: 'POST', token: this.requireToken(), body: { input, ...(onBehalfOf ? { onBehalfOf } : {}) } },
    );
    if (answer.status === 202) return answer.body.runId;
    refuseUnauthorized(answer.status, answer.body);
    if (answer.status === 404)
      throw new CliError(
        `the agent worker refused the runbook: ${errorMessage(answer.body)}`,
        ExitCode.NotFound,
      );
    if (answer.status === 400)
      throw new CliError(
        `the agent worker refused the runbook: ${errorMessage(answer.body)}`,
        ExitCode.InvalidInput,
      );
    throw new CliError(
      `the agent worker answered ${answer.status}: ${errorMessage(answer.body)}`,
      ExitCode.Failure,
    );
  }

  async run(runId: string): Promise<RunView> {
    const answer = await requestJson<RunView>(SERVICE, `${this.baseUrl}/runs/${encodeURIComponent(runId)}`, {
      token: this.requireToken(),
    });
    if (answer.status === 200) return answer.body;
    refuseUnauthorized(answer.status, answer.body);
    if (answer.status === 404) throw new CliError(`unknown run ${runId}`, ExitCode.NotFound);
    throw new CliError(`GET /runs/${runId} answered ${answer.status}`, ExitCode.Failure);
  }

  async infra(): Promise<InfraView> {
    const answer = await requestJson<InfraView>(SERVICE, `${this.baseUrl}/demo/infra`, {
      token: this.requireToken(),
    });
    refuseUnauthorized(answer.status, answer.body);
    return answer.body;
  }

  /**
   * The run's events from its SSE stream: its history (what happened before this call too), then live events up
   * to `done`. Reconnects when the stream drops before `done` (a worker restarted), with Last-Event-ID, so the
   * stream goes on after the last event seen instead of repeating it.
   */
  async *follow(runId: string, signal?: AbortSignal): AsyncGenerator<RunEvent> {
    const url = `${this.baseUrl}/runs/${encodeURIComponent(runId)}/events`;
    const authorization = `Bearer ${this.requireToken()}`;
    let lastEventId: string | undefined;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', authorization };
        if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
        response = await fetch(url, { headers, signal });
      } catch (error) {
        if (signal?.aborted) return;
        if (attempt >= 20) throw unreachable(SERVICE, url, error);
        await pause(500);
        continue;
      }
      if (response.status === 404) throw new CliError(`unknown run ${runId}`, ExitCode.NotFound);
      if (response.status === 401 || response.status === 403)
        refuseUnauthorized(response.status, await response.json().catch(() => undefined));
      if (!response.ok || !response.body)
        throw new CliError(`${url} answered ${response.status}`, ExitCode.Failure);
      try {
        for await (const message of readSse(response.body)) {
          if (message.id !== undefined) lastEventId = message.id;
          const parsed = RunEventSchema.safeParse(JSON.parse(message.data));
          if (!parsed.success) continue;
          yield parsed.data;
          if (parsed.data.type === 'done') return;
        }
      } catch (error) {
        if (signal?.aborted) return;
        if (!(error instanceof TypeError) && (error as Error).name !== 'AbortError') throw error;
      }
      if (signal?.aborted) return;
      await pause(250);
    }
  }

  private requireToken(): string {
    if (!this.token)
      throw new CliError(
        'no token: pass --token or set COUNTERSIGN_TOKEN (your API token)',
        ExitCode.NotAuthorized,
      );
    return this.token;
  }
}

function refuseUnauthorized(status: number, body: unknown): void {
  if (status === 401)
    throw new CliError(
      `not authorized: the agent worker did not accept the token (${errorMessage(body)})`,
      ExitCode.NotAuthorized,
    );
  if (status === 403) throw new CliError(`not authorized: ${errorMessage(body)}`, ExitCode.NotAuthorized);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
