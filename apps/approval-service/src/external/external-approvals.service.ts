// The approvals API for agents Countersign does not run. A submitted call becomes an approval request like the
// worker's (same routing, store, quorum, expiry, channels and audit, through RequestIntake.receive), keyed by an
// approval ID made here; its decision stays here for the client to read, claim once and report on. A call is the
// client's and its requester's: every route names the requester as the submission did (requesterOf), and finds only
// an approval of that client and requester (belongsTo).
import { createHash, randomBytes } from 'node:crypto';
import { ForbiddenException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { fingerprint } from '@countersign/authorization';
import {
  type ApprovalRequest,
  type ClaimBody,
  type ClaimResult,
  type CompletionBody,
  type ExternalApprovalView,
  type ExternalSubmission,
} from '@countersign/contracts';
import { mayActFor, type Logger, type Principal } from '@countersign/platform';
import { ApproverDirectory } from '../auth/approver-directory';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import { AuditTrail } from '../core/audit-trail';
import { ServiceAddress } from '../core/service-address';
import { LOGGER } from '../core/tokens';
import { RequestIntake } from '../requests/intake/request-intake';
import { LiveUpdates } from '../requests/live-updates';
import { RequestRouter } from '../requests/routing/request-router';
import { ExternalAdmission } from './external-admission';
import { ExternalCallRefusedError, ExternalErrorCode, FieldRefusedError } from './external-errors';
import { ExternalCallStore, type StoredExternalApproval } from './external-call-store';
import { externalView } from './external-view';
import { ExternalWebhooks } from './external-webhooks';

/** How long past its request's own life an index entry is kept, so it never names a request that is still there. */
const INDEX_MARGIN_MS = 60_000;

@Injectable()
export class ExternalApprovalsService {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly intake: RequestIntake,
    private readonly admission: ExternalAdmission,
    private readonly router: RequestRouter,
    private readonly store: ExternalCallStore,
    private readonly directory: ApproverDirectory,
    private readonly webhooks: ExternalWebhooks,
    private readonly live: LiveUpdates,
    private readonly audit: AuditTrail,
    private readonly address: ServiceAddress,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * Submits a call for a decision, or finds the approval of the same call (same client, requester, run, call ID and
   * arguments). `created` says which; a submission that finds an earlier one's approval is audited.
   */
  async submit(
    caller: Principal,
    body: ExternalSubmission,
  ): Promise<{ view: ExternalApprovalView; created: boolean }> {
    const requester = this.requesterOf(caller, body.onBehalfOf);
    if (body.webhook) {
      const refused = this.webhooks.refusal(body.webhook.url);
      if (refused) throw new FieldRefusedError('webhook.url', refused);
    }
    const shown = fingerprint(body.toolName, body.args);
    const toolDescription = body.context?.toolDescription ?? '';
    // The approval ID is the request's ID (its state is keyed by it) and stands in for the call ID, which is the
    // client's own (kept in `external`): two clients' call IDs never meet.
    const candidateId = `xa-${randomBytes(16).toString('hex')}`;
    const request: ApprovalRequest = {
      requestId: candidateId,
      callId: candidateId,
      runId: body.runId,
      // Rules match the client by `agent`: it is the authenticated principal, never a name the body chose.
      agent: caller.id,
      requester,
      submittedBy: requester === caller.id ? undefined : caller.id,
      toolName: body.toolName,
      toolDescription,
      args: body.args,
      tier: 'confirm',
      fingerprint: shown,
      toolDefinitionHash: createHash('sha256')
        .update(`${body.toolName}\u001f${toolDescription}`)
        .digest('hex'),
      reason: 'confirmation_required',
      attempt: 0,
      requestedAt: new Date().toISOString(),
      external: {
        principal: caller.id,
        callId: body.callId,
        runDescription: body.context?.runDescription,
        webhookUrl: body.webhook?.url,
      },
    };
    // The index entry must outlive the request it names: its expiry, then the retention of a settled request.
    const { env } = this.config;
    const route = this.router.route(request);
    // With no rule's route, an admission hook naming groups still gets the request the defaults' expiry.
    const expiresInMs =
      route?.expiresInMs ?? this.config.approvals.defaults.expiresIn ?? this.router.defaultExpiryMs;
    const lifeMs = expiresInMs + env.APPROVAL_RETENTION + env.TIMER_LEASE_MS + INDEX_MARGIN_MS;
    const ref = {
      principal: caller.id,
      requester,
      runId: body.runId,
      callId: body.callId,
      fingerprint: shown,
    };
    const { approvalId, reserved: created } = await this.store.reserveId(ref, request.callId, lifeMs);

    // Also stored here when the submission that reserved the ID died before storing it (or is storing it now:
    // create-request stores an attempt once, so the second store changes nothing).
    let stored = await this.store.get(approvalId);
    if (!stored) {
      const taken = { ...request, requestId: approvalId, callId: approvalId };
      // The admission hooks first: they may decide the call at once, or name who is asked.
      const verdict = await this.admission.admit(taken);
      if (verdict.action === 'deny')
        // Decided here in the hook's name, published like any decision (the client's webhook); nobody is asked.
        await this.intake.refuse(taken, {
          actor: `hook:${verdict.hook}`,
          reason: verdict.reason,
          detail: { hook: verdict.hook, answer: verdict.answer, source: 'external' },
        });
      // Stored, routed, notified and audited like a request of the worker (or refused there for want of a route).
      else await this.intake.receive(verdict.admission ? { ...taken, admission: verdict.admission } : taken);
      stored = await this.store.get(approvalId);
      if (!stored) throw new Error(`approval ${approvalId} was not stored`);
    }
    // The index names it by these five parts; an approval that is not theirs is never handed out (fail closed).
    if (!belongsTo(stored, caller.id, requester) || stored.request.fingerprint !== shown)
      throw new Error(`approval ${approvalId} is not the one of this client's call`);
    const view = externalView(stored, this.address.publicUrl);
    const ids = { callId: approvalId, runId: body.runId };
    this.logger.info(
      { ...ids, client: caller.id, requester, clientCallId: body.callId, created },
      'external call submitted',
    );
    if (!created)
      await this.audit.append({
        type: 'request.resubmitted',
        ...ids,
        actor: caller.id,
        detail: {
          source: 'external',
          client: caller.id,
          requester,
          approvalId,
          clientCallId: body.callId,
          fingerprint: shown,
          status: view.status,
        },
      });
    return { view, created };
  }

  /**
   * The caller's approval; with `waitMs`, answers as soon as it is decided, or after `waitMs` with it still pending.
   * `signal` ends the wait early (the client went away).
   */
  async read(
    caller: Principal,
    approvalId: string,
    query: { waitMs: number; onBehalfOf?: string },
    signal?: AbortSignal,
  ): Promise<ExternalApprovalView> {
    const requester = this.requesterOf(caller, query.onBehalfOf, 'query');
    let stored = await this.owned(caller, requester, approvalId);
    if (query.waitMs > 0 && stored.status === 'pending') {
      await this.settledOrTimeout(approvalId, query.waitMs, signal);
      stored = await this.owned(caller, requester, approvalId);
    }
    return externalView(stored, this.address.publicUrl);
  }

  /** Claims the approved call once; the client may run it only when this succeeds. */
  async claim(caller: Principal, approvalId: string, body: ClaimBody): Promise<ClaimResult> {
    const requester = this.requesterOf(caller, body.onBehalfOf);
    const stored = await this.owned(caller, requester, approvalId);
    const claimed = body.fingerprint;
    const { request } = stored;
    const ids = { callId: approvalId, runId: request.runId };
    try {
      if (claimed !== request.fingerprint)
        throw new ExternalCallRefusedError(
          ExternalErrorCode.FingerprintMismatch,
          'the fingerprint does not match the approved call: its tool or arguments changed after approval',
        );
      const claimedAt = await this.store.claim(approvalId, caller.id);
      await this.audit.append({
        type: 'tool.claimed',
        ...ids,
        actor: caller.id,
        detail: {
          toolName: request.toolName,
          fingerprint: request.fingerprint,
          clientCallId: request.external?.callId,
        },
      });
      return {
        approvalId,
        toolName: request.toolName,
        args: request.args,
        fingerprint: request.fingerprint,
        requester: request.requester,
        claimedAt,
      };
    } catch (error) {
      if (error instanceof ExternalCallRefusedError)
        await this.refused(caller, ids, 'claim', error, {
          fingerprint: claimed,
          approved: request.fingerprint,
        });
      throw error;
    }
  }

  /** Records how running the claimed call went, in the audit log (`tool.executed`). */
  async complete(
    caller: Principal,
    approvalId: string,
    report: CompletionBody,
  ): Promise<ExternalApprovalView> {
    const requester = this.requesterOf(caller, report.onBehalfOf);
    const stored = await this.owned(caller, requester, approvalId);
    const ids = { callId: approvalId, runId: stored.request.runId };
    try {
      await this.store.complete(approvalId, caller.id, report);
    } catch (error) {
      if (error instanceof ExternalCallRefusedError) await this.refused(caller, ids, 'completion', error);
      throw error;
    }
    await this.audit.append({
      type: 'tool.executed',
      ...ids,
      actor: caller.id,
      detail: {
        source: 'external',
        toolName: stored.request.toolName,
        outcome: report.outcome,
        summary: report.summary ?? null,
        clientCallId: stored.request.external?.callId,
      },
    });
    this.logger.info({ ...ids, outcome: report.outcome }, 'external call completed');
    return externalView((await this.store.get(approvalId)) ?? stored, this.address.publicUrl);
  }

  webhookSecret(caller: Principal): string {
    const secret = this.webhooks.secretFor(caller.id);
    if (!secret)
      throw new NotFoundException('webhooks are not enabled on this service (WEBHOOK_ALLOWED_ORIGINS)');
    return secret;
  }

  /**
   * The requester a route names: the caller, or the person it acts for (only with an actAs entry naming them, checked
   * on every route, so a revoked entry stops reads and claims too). `where` the field is, for the 400.
   */
  private requesterOf(caller: Principal, onBehalfOf: string | undefined, where?: string): string {
    if (onBehalfOf === undefined || onBehalfOf === caller.id) return caller.id;
    if (!mayActFor(caller, onBehalfOf))
      throw new ForbiddenException(`${caller.id} may not act for ${onBehalfOf}`);
    if (!this.directory.byId(onBehalfOf))
      throw new FieldRefusedError('onBehalfOf', `unknown principal "${onBehalfOf}"`, where);
    return onBehalfOf;
  }

  /**
   * The approval, if the caller submitted it for `requester`; anything else is "not found", with the answer an unknown
   * ID gets (its existence is not the caller's, nor whom it is for).
   */
  private async owned(
    caller: Principal,
    requester: string,
    approvalId: string,
  ): Promise<StoredExternalApproval> {
    const stored = await this.store.get(approvalId);
    if (!stored || !belongsTo(stored, caller.id, requester)) {
      if (stored?.request.external?.principal === caller.id)
        this.logger.warn(
          {
            callId: approvalId,
            runId: stored.request.runId,
            client: caller.id,
            requester,
            of: stored.request.requester,
          },
          'external approval asked for by another requester: answered as unknown',
        );
      throw new ExternalCallRefusedError(ExternalErrorCode.NotFound, `no approval ${approvalId}`);
    }
    return stored;
  }

  /**
   * Resolves when the approval leaves `pending`, after `waitMs`, or on `signal`. Subscribed before the state is read
   * again, so a decision made between the caller's read and the subscription is not missed.
   */
  private settledOrTimeout(approvalId: string, waitMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const cleanups: (() => void)[] = [];
      let finished = false;
      const done = () => {
        if (finished) return;
        finished = true;
        for (const cleanup of cleanups) cleanup();
        resolve();
      };
      cleanups.push(
        this.live.subscribe((change) => {
          if (change.callId === approvalId && change.status !== 'pending') done();
        }, done),
      );
      const timer = setTimeout(done, waitMs);
      cleanups.push(() => clearTimeout(timer));
      if (signal) {
        signal.addEventListener('abort', done);
        cleanups.push(() => signal.removeEventListener('abort', done));
        if (signal.aborted) return done();
      }
      this.store.get(approvalId).then(
        (now) => {
          if (!now || now.status !== 'pending') done();
        },
        () => done(),
      );
    });
  }

  private async refused(
    caller: Principal,
    ids: { callId: string; runId: string },
    what: 'claim' | 'completion',
    error: ExternalCallRefusedError,
    detail: Record<string, unknown> = {},
  ): Promise<void> {
    this.logger.warn({ ...ids, client: caller.id, what, reason: error.reason }, 'external call refused');
    await this.audit.append({
      type: 'tool.claim_refused',
      ...ids,
      actor: caller.id,
      detail: { what, reason: error.reason, ...detail },
    });
  }
}

/** Whether an approval is `client`'s call for `requester`: the rule every route of the approvals API finds it by. */
export function belongsTo(stored: StoredExternalApproval, client: string, requester: string): boolean {
  return stored.request.external?.principal === client && stored.request.requester === requester;
}
