// The approval service's API as an approver uses it (Bearer token): list, read and decide requests, read the audit.
import {
  APPROVAL_PAGE_LIMIT,
  type ApprovalView,
  type AuditEntry,
  type AuditVerification,
  type DecisionResult,
  type DecisionValue,
  type StandingRule,
} from '@countersign/contracts';
import { CliError, ExitCode } from '../cli-error';
import { changedText } from '../render';
import { errorMessage, requestJson, type HttpAnswer } from './http';

const SERVICE = 'approval service';

export type ApprovalStatusFilter = 'pending' | 'decided' | 'expired';

/** `approvals list` stops after this many requests unless told otherwise (`--limit`). */
export const DEFAULT_LIST_MAX = 10_000;

/**
 * A vote pinned to a revision (its fingerprint) that the service refused because the arguments changed since: nothing
 * was decided. `current` is the request as it is now, when it could be read.
 */
export class RevisionChangedError extends CliError {
  constructor(
    readonly id: string,
    readonly seen: string,
    readonly current: ApprovalView | undefined,
  ) {
    super(changedText(id, seen, current), ExitCode.Changed);
  }
}

export interface ApprovalPage {
  views: ApprovalView[];
  /** Absolute URL of the next page; undefined on the last one. */
  next?: string;
}

export class ApprovalClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  /** One page of `GET /approvals`; `next` is the absolute URL of the following page, if any. */
  async page(
    query: { status?: ApprovalStatusFilter; limit?: number } | { next: string },
  ): Promise<ApprovalPage> {
    const url =
      'next' in query
        ? query.next
        : `${this.baseUrl}/approvals?${new URLSearchParams({
            ...(query.status ? { status: query.status } : {}),
            ...(query.limit ? { limit: String(query.limit) } : {}),
          })}`;
    const answer = await this.call<ApprovalView[]>('GET', url);
    return { views: this.expectOk(answer, 'approvals'), next: this.nextPage(answer.link, url) };
  }

  /**
   * Every request routed to this approver, following the `next` links page after page, up to `max` of them;
   * `more` says that the service had more.
   */
  async list(
    status?: ApprovalStatusFilter,
    max = DEFAULT_LIST_MAX,
  ): Promise<{ views: ApprovalView[]; more: boolean }> {
    const views: ApprovalView[] = [];
    let page = await this.page({ status, limit: Math.min(max, APPROVAL_PAGE_LIMIT.max) });
    views.push(...page.views);
    while (page.next && views.length < max) {
      page = await this.page({ next: page.next });
      views.push(...page.views);
    }
    return { views: views.slice(0, max), more: views.length > max || page.next !== undefined };
  }

  /** `undefined` when the service does not know the call or does not route it to this approver. */
  async get(callId: string): Promise<ApprovalView | undefined> {
    const answer = await this.call<ApprovalView>('GET', `/approvals/${encodeURIComponent(callId)}`);
    if (answer.status === 404) return undefined;
    return this.expectOk(answer, callId);
  }

  /**
   * `edit.args`: approve these arguments instead (checked against the tool's schema; under a quorum the others are
   * asked about them); `edit.fingerprint`: the revision you were shown, which the service records the vote on or
   * refuses (RevisionChangedError) when someone edited the arguments since; `edit.response`: decision "respond" only,
   * the text the agent is given instead of running the call.
   */
  async decide(
    callId: string,
    decision: DecisionValue,
    reason?: string,
    edit: { args?: Record<string, unknown>; fingerprint?: string; response?: string } = {},
  ): Promise<DecisionResult> {
    const answer = await this.call<DecisionResult>(
      'POST',
      `/approvals/${encodeURIComponent(callId)}/decisions`,
      {
        decision,
        ...(reason ? { reason } : {}),
        ...(edit.args ? { args: edit.args } : {}),
        ...(edit.fingerprint ? { fingerprint: edit.fingerprint } : {}),
        ...(edit.response !== undefined ? { response: edit.response } : {}),
      },
    );
    if (edit.fingerprint && answer.status === 409 && errorCode(answer.body) === 'arguments_edited')
      throw new RevisionChangedError(callId, edit.fingerprint, await this.get(callId).catch(() => undefined));
    return this.expectOk(answer, callId);
  }

  /** A manual-step notice: you did the step (the agent's model is told). */
  async done(callId: string, note?: string): Promise<{ callId: string; status: 'done'; next: string }> {
    const answer = await this.call<{ callId: string; status: 'done'; next: string }>(
      'POST',
      `/approvals/${encodeURIComponent(callId)}/done`,
      note ? { note } : {},
    );
    return this.expectOk(answer, callId);
  }

  async rules(): Promise<StandingRule[]> {
    return this.expectOk(await this.call<StandingRule[]>('GET', '/standing-rules'), 'standing rules');
  }

  async addRule(rule: Record<string, unknown>): Promise<StandingRule> {
    return this.expectOk(await this.call<StandingRule>('POST', '/standing-rules', rule), 'standing rule');
  }

  async revokeRule(id: string): Promise<StandingRule> {
    const answer = await this.call<StandingRule>('DELETE', `/standing-rules/${encodeURIComponent(id)}`);
    return this.expectOk(answer, id);
  }

  /**
   * The audit entries this token may read (of one run or call), oldest first. GET /audit answers newest first, a page
   * at a time: this follows the `next` links to older pages, up to `max` entries (the newest ones).
   */
  async audit(filter: { runId?: string; callId?: string }, max = DEFAULT_LIST_MAX): Promise<AuditEntry[]> {
    const pages: AuditEntry[][] = [];
    let count = 0;
    let url: string | undefined =
      `${this.baseUrl}/audit?${new URLSearchParams(filter as Record<string, string>)}`;
    while (url && count < max) {
      const answer: HttpAnswer<AuditEntry[]> = await this.call<AuditEntry[]>('GET', url);
      const entries = this.expectOk(answer, 'audit');
      pages.unshift(entries);
      count += entries.length;
      url = this.nextPage(answer.link, url);
    }
    return pages.flat().slice(-max);
  }

  /** A one-time link that signs a browser in to the inbox (POST /inbox/sign-in-links). */
  async signInLink(): Promise<{ url: string; expiresAt: string }> {
    return this.expectOk(await this.call('POST', '/inbox/sign-in-links'), 'inbox sign-in link');
  }

  /** Whether every chain of the audit log is intact (GET /audit/verify). */
  async verifyAudit(): Promise<AuditVerification> {
    return this.expectOk(await this.call('GET', '/audit/verify'), 'audit');
  }

  /** `path` is below the base URL, or a whole URL of the same origin (a `next` link). */
  private call<T>(method: string, path: string, body?: unknown): Promise<HttpAnswer<T>> {
    if (!this.token)
      throw new CliError(
        'no token: pass --token or set COUNTERSIGN_TOKEN (your API token)',
        ExitCode.NotAuthorized,
      );
    const url = path.startsWith('/') ? `${this.baseUrl}${path}` : path;
    return requestJson<T>(SERVICE, url, { method, token: this.token, body });
  }

  /**
   * The `rel="next"` target of a Link header, resolved against the page it came with. A link to another origin is
   * refused: following it would send the approver token there.
   */
  private nextPage(link: string | undefined, from: string): string | undefined {
    const target = link && /<([^>]*)>\s*;\s*rel="?next"?/i.exec(link)?.[1];
    if (!target) return undefined;
    const next = new URL(target, from);
    if (next.origin !== new URL(from).origin || next.href === from)
      throw new CliError(
        `the approval service sent a next-page link that cannot be followed: ${target}`,
        ExitCode.Failure,
      );
    return next.href;
  }

  private expectOk<T>(answer: HttpAnswer<T>, subject: string): T {
    const { status, body } = answer;
    if (status >= 200 && status < 300) return body;
    const message = errorMessage(body);
    if (status === 409 && errorCode(body) === 'ambiguous_call_id') throw ambiguous(subject, body);
    switch (status) {
      case 400:
        throw new CliError(`invalid request: ${message}`, ExitCode.InvalidInput);
      case 401:
        throw new CliError(
          `not authorized: the approval service did not accept the token (${message})`,
          ExitCode.NotAuthorized,
        );
      case 403:
        throw new CliError(`not authorized: ${message}`, ExitCode.NotAuthorized);
      case 404:
        throw new CliError(
          `unknown call ID ${subject} (or it is not routed to you): ${message}`,
          ExitCode.NotFound,
        );
      case 409:
      case 410:
        throw new CliError(`${subject}: ${message}`, ExitCode.Conflict);
      default:
        throw new CliError(`the approval service answered ${status}: ${message}`, ExitCode.Failure);
    }
  }
}

/** A call ID that several runs' requests used: which request IDs to choose from, and how. */
function ambiguous(id: string, body: unknown): CliError {
  const ids = (body as { requestIds?: unknown }).requestIds;
  const choices = Array.isArray(ids) ? ids.map(String) : [];
  const how =
    choices.length > 0
      ? `; name one by its request ID: ${choices.join(', ')} (e.g. countersign approve ${choices[0]})`
      : '; name the request by its request ID (countersign approvals list shows them)';
  return new CliError(`call ID ${id} is used by requests of several runs${how}`, ExitCode.Ambiguous);
}

/** The machine-readable `error` of a refusal (e.g. `arguments_edited`), when the body has one. */
function errorCode(body: unknown): string | undefined {
  return body && typeof body === 'object' && 'error' in body
    ? String((body as { error: unknown }).error)
    : undefined;
}
