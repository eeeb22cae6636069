// The approval service's API as an approver uses it (Bearer token): list, read and decide requests, read the audit.
import type { ApprovalView, AuditEntry, AuditVerification, DecisionResult } from '@countersign/contracts';
import { CliError, ExitCode } from '../cli-error';
import { errorMessage, requestJson, type HttpAnswer } from './http';

const SERVICE = 'approval service';

export type ApprovalStatusFilter = 'pending' | 'decided' | 'expired';

export class ApprovalClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  async list(status?: ApprovalStatusFilter): Promise<ApprovalView[]> {
    const query = status ? `?status=${status}` : '';
    return this.expectOk(await this.call<ApprovalView[]>('GET', `/approvals${query}`), 'approvals');
  }

  /** `undefined` when the service does not know the call or does not route it to this approver. */
  async get(callId: string): Promise<ApprovalView | undefined> {
    const answer = await this.call<ApprovalView>('GET', `/approvals/${encodeURIComponent(callId)}`);
    if (answer.status === 404) return undefined;
    return this.expectOk(answer, callId);
  }

  async decide(callId: string, decision: 'approve' | 'deny', reason?: string): Promise<DecisionResult> {
    const answer = await this.call<DecisionResult>(
      'POST',
      `/approvals/${encodeURIComponent(callId)}/decisions`,
      { decision, ...(reason ? { reason } : {}) },
    );
    return this.expectOk(answer, callId);
  }

  async audit(filter: { runId?: string; callId?: string }): Promise<AuditEntry[]> {
    const query = new URLSearchParams(filter as Record<string, string>).toString();
    return this.expectOk(await this.call<AuditEntry[]>('GET', `/audit?${query}`), 'audit');
  }

  /** Whether every chain of the audit log is intact (GET /audit/verify). */
  async verifyAudit(): Promise<AuditVerification> {
    return this.expectOk(await this.call('GET', '/audit/verify'), 'audit');
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<HttpAnswer<T>> {
    if (!this.token)
      throw new CliError(
        'no approver token: pass --approver-token or set COUNTERSIGN_APPROVER_TOKEN',
        ExitCode.NotAuthorized,
      );
    return requestJson<T>(SERVICE, `${this.baseUrl}${path}`, { method, token: this.token, body });
  }

  private expectOk<T>(answer: HttpAnswer<T>, subject: string): T {
    const { status, body } = answer;
    if (status >= 200 && status < 300) return body;
    const message = errorMessage(body);
    switch (status) {
      case 400:
        throw new CliError(`invalid request: ${message}`, ExitCode.InvalidInput);
      case 401:
        throw new CliError(
          `not authorized: the approval service did not accept the approver token (${message})`,
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
