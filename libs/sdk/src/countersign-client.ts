// A client of the approvals API (`/external-approvals` on the approval service), for agents Countersign does not
// run. Plain Node (global fetch), no framework: every answer is checked against the API's own schemas.
import {
  ClaimResultSchema,
  ExternalApprovalViewSchema,
  ExternalRefusalSchema,
  EXTERNAL_MAX_WAIT_MS,
  WebhookSecretSchema,
  type ClaimResult,
  type ExternalApprovalView,
  type ExternalRefusalReason,
  type ExternalSubmission,
} from '@countersign/contracts/external-approvals.schema';
import type { z } from 'zod';
import { CountersignApiError, CountersignError } from './errors';
import { guardCall, type GuardOptions, type GuardResult, type GuardedExecute } from './guard';

export interface CountersignClientOptions {
  /** The approval service, e.g. `https://countersign.example.com`. */
  baseUrl: string;
  /** A bearer token of a machine principal with the `approvals-client` role. */
  token: string;
  /**
   * How long one request may take, long polls excepted (they take their wait plus this).
   * @defaultValue 10000
   */
  requestTimeoutMs?: number;
  /**
   * The fetch to use.
   * @defaultValue globalThis.fetch
   */
  fetch?: typeof fetch;
}

/** One tool call of an agent, as submitted for a decision. */
export interface ExternalCall {
  /** The agent's run (conversation, job): with `callId`, what makes a call the same call when submitted again. */
  runId: string;
  callId: string;
  toolName: string;
  args: Record<string, unknown>;
  /** The person the agent acts for (the client needs an `actAs` entry for them). */
  onBehalfOf?: string;
  /** Shown to approvers: what the run is for, what the tool does. */
  context?: { runDescription?: string; toolDescription?: string };
  /** Told of the decision by a signed POST (the URL's origin must be allowed by the service). */
  webhookUrl?: string;
}

export type ClaimOutcome =
  | { status: 'claimed'; claim: ClaimResult }
  | { status: 'refused'; reason: ExternalRefusalReason; httpStatus: number; message: string };

/** Whom the approval's call is for: the `onBehalfOf` of its submission (left out: the client itself). */
export interface RequesterOptions {
  onBehalfOf?: string;
}

export interface ReadOptions extends RequesterOptions {
  /** Answer once decided, at most this long from now (≤ 30 s); 0 answers at once. */
  waitMs?: number;
  signal?: AbortSignal;
}

export interface WaitOptions extends RequesterOptions {
  /**
   * How long to wait for a decision in all.
   * @defaultValue until the approval's expiry and a minute more (by then the service has decided it: expired)
   */
  timeoutMs?: number;
  /** Stops waiting: the approval is returned as it is then (pending). */
  signal?: AbortSignal;
}

/** Longest single long poll: under the API's 30 s bound, and under common proxies' idle timeouts. */
const LONG_POLL_MS = 25_000;
/** How late after its expiry an undecided approval is surely decided (the service's timer sweep runs every second). */
const EXPIRY_GRACE_MS = 60_000;

export class CountersignClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly timeoutMs: number;

  constructor(private readonly options: CountersignClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.requestTimeoutMs ?? 10_000;
  }

  /**
   * Submits a call for a decision; the same call (person, run, call ID, arguments) submitted again gets the same
   * approval.
   */
  submit(call: ExternalCall): Promise<ExternalApprovalView> {
    const body: ExternalSubmission = {
      runId: call.runId,
      callId: call.callId,
      toolName: call.toolName,
      args: call.args,
      onBehalfOf: call.onBehalfOf,
      context: call.context,
      webhook: call.webhookUrl === undefined ? undefined : { url: call.webhookUrl },
    };
    return this.request('POST', '/external-approvals', ExternalApprovalViewSchema, { body });
  }

  /**
   * The approval now, or (`waitMs`) as soon as it is decided, at most that long from now. `onBehalfOf` as at its
   * submission: the approval of another requester is not found (404).
   */
  get(approvalId: string, options: ReadOptions = {}): Promise<ExternalApprovalView> {
    const waitMs = Math.max(0, Math.min(options.waitMs ?? 0, EXTERNAL_MAX_WAIT_MS));
    const query = new URLSearchParams();
    if (waitMs > 0) query.set('waitMs', String(waitMs));
    if (options.onBehalfOf !== undefined) query.set('onBehalfOf', options.onBehalfOf);
    const search = query.toString() ? `?${query.toString()}` : '';
    return this.request(
      'GET',
      `/external-approvals/${encodeURIComponent(approvalId)}${search}`,
      ExternalApprovalViewSchema,
      {
        signal: options.signal,
        extraMs: waitMs,
      },
    );
  }

  /**
   * Waits until the approval is decided, the timeout passes or `signal` aborts, by long polls; returns it as it is
   * then (`pending` when undecided).
   */
  async waitForDecision(approvalId: string, options: WaitOptions = {}): Promise<ExternalApprovalView> {
    const { onBehalfOf } = options;
    let view = await this.get(approvalId, { onBehalfOf });
    const deadline =
      Date.now() +
      (options.timeoutMs ?? Math.max(0, Date.parse(view.expiresAt) - Date.now()) + EXPIRY_GRACE_MS);
    while (view.status === 'pending' && !options.signal?.aborted) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        view = await this.get(approvalId, {
          waitMs: Math.min(left, LONG_POLL_MS),
          signal: options.signal,
          onBehalfOf,
        });
      } catch (error) {
        if (options.signal?.aborted) break;
        throw error;
      }
    }
    return view;
  }

  /**
   * Claims the approved call, once: only a `claimed` outcome allows running it, with exactly the returned
   * arguments. `fingerprint` is that of the call about to run (a mismatch is refused); `onBehalfOf` whom it runs for.
   */
  async claim(
    approvalId: string,
    fingerprint: string,
    options: RequesterOptions = {},
  ): Promise<ClaimOutcome> {
    try {
      const claim = await this.request(
        'POST',
        `/external-approvals/${encodeURIComponent(approvalId)}/claim`,
        ClaimResultSchema,
        { body: { fingerprint, onBehalfOf: options.onBehalfOf } },
      );
      return { status: 'claimed', claim };
    } catch (error) {
      if (error instanceof CountersignApiError && isRefusalReason(error.reason))
        return { status: 'refused', reason: error.reason, httpStatus: error.status, message: error.message };
      throw error;
    }
  }

  /** Reports how running a claimed call went; it goes to the audit log. */
  complete(
    approvalId: string,
    report: { outcome: 'ok' | 'error'; summary?: string },
    options: RequesterOptions = {},
  ): Promise<ExternalApprovalView> {
    return this.request(
      'POST',
      `/external-approvals/${encodeURIComponent(approvalId)}/completion`,
      ExternalApprovalViewSchema,
      { body: { ...report, onBehalfOf: options.onBehalfOf } },
    );
  }

  /** This client's webhook signing secret (see verifyWebhook). */
  async webhookSecret(): Promise<string> {
    return (await this.request('GET', '/external-approvals/webhook-secret', WebhookSecretSchema)).secret;
  }

  /**
   * Submit, wait for the decision, claim, run `execute` with the approved arguments, report: see guardCall. The call
   * runs only if Countersign approved exactly these arguments for this requester, and this claim is the first.
   */
  guard<T>(
    call: ExternalCall,
    execute: GuardedExecute<T>,
    options: GuardOptions<T> = {},
  ): Promise<GuardResult<T>> {
    return guardCall(this, call, execute, options);
  }

  private async request<S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    options: { body?: unknown; signal?: AbortSignal; extraMs?: number } = {},
  ): Promise<z.output<S>> {
    const timeout = AbortSignal.timeout(this.timeoutMs + (options.extraMs ?? 0));
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Response;
    try {
      response = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.options.token}`,
          Accept: 'application/json',
          ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal,
      });
    } catch (error) {
      throw new CountersignError(
        `${method} ${path}: the approval service did not answer (${describe(error)})`,
        {
          cause: error,
        },
      );
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw new CountersignError(
        `${method} ${path}: answered ${response.status} with a body that is not JSON`,
      );
    }
    if (!response.ok) {
      const refusal = ExternalRefusalSchema.safeParse(json);
      if (refusal.success)
        throw new CountersignApiError(response.status, refusal.data.error, refusal.data.message);
      const message = (json as { message?: unknown } | undefined)?.message;
      throw new CountersignApiError(
        response.status,
        'http_error',
        typeof message === 'string' ? message : response.statusText,
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new CountersignError(`${method} ${path}: unexpected answer (${parsed.error.issues[0]?.message})`);
    return parsed.data;
  }
}

function isRefusalReason(reason: string): reason is ExternalRefusalReason {
  return ExternalRefusalSchema.shape.error.safeParse(reason).success;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.name === 'TimeoutError' ? 'timed out' : error.message;
  return String(error);
}
