// The approvals API for agents Countersign does not run: submit a call, wait for its decision, claim it once, report.
// Only machine clients with the `approvals-client` role call it, each seeing only its own submissions, for the requester
// they were submitted for. Submissions are rate limited per source address, per client and per person acted for.
import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, UseFilters } from '@nestjs/common';
import {
  ClaimBodySchema,
  CompletionBodySchema,
  ExternalApprovalIdSchema,
  ExternalSubmissionSchema,
  ExternalWaitQuerySchema,
  type ClaimBody,
  type ClaimResult,
  type CompletionBody,
  type ExternalApprovalView,
  type ExternalSubmission,
  type ExternalWaitQuery,
} from '@countersign/contracts';
import {
  CurrentPrincipal,
  RateLimited,
  RequireRole,
  ZodValidationPipe,
  type Principal,
} from '@countersign/platform';
import { ApprovalRoute } from '../config/rate-limits';
import type { HttpResponse as Response } from '../core/http-types';
import { ExternalApprovalsService } from './external-approvals.service';
import { ExternalRefusalFilter, FieldRefusalFilter } from './external-errors';

const approvalId = new ZodValidationPipe(ExternalApprovalIdSchema, 'approvalId');

@Controller('external-approvals')
@RequireRole('approvals-client')
@UseFilters(ExternalRefusalFilter, FieldRefusalFilter)
export class ExternalApprovalsController {
  constructor(private readonly external: ExternalApprovalsService) {}

  /** 201 with a new approval, 200 with the one this call (same requester, run, call ID and arguments) already has. */
  @Post()
  @RateLimited(ApprovalRoute.ExternalSubmission)
  async submit(
    @Body(new ZodValidationPipe(ExternalSubmissionSchema)) body: ExternalSubmission,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ExternalApprovalView> {
    const { view, created } = await this.external.submit(caller, body);
    res.status(created ? 201 : 200);
    return view;
  }

  /** The caller's webhook signing secret (derived for it alone). Declared before `:approvalId`. */
  @Get('webhook-secret')
  webhookSecret(@CurrentPrincipal() caller: Principal): { secret: string } {
    return { secret: this.external.webhookSecret(caller) };
  }

  /** The approval now, or (`waitMs`) once decided, at most that long from now. */
  @Get(':approvalId')
  read(
    @Param('approvalId', approvalId) id: string,
    @Query(new ZodValidationPipe(ExternalWaitQuerySchema, 'query')) query: ExternalWaitQuery,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ExternalApprovalView> {
    // A client that goes away stops the wait (its connection closes before the answer is written).
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    return this.external.read(caller, id, query, gone.signal);
  }

  /** 200: run the call (exactly the arguments returned); 409 claimed before, not decided or changed; 410 expired. */
  @Post(':approvalId/claim')
  @HttpCode(200)
  claim(
    @Param('approvalId', approvalId) id: string,
    @Body(new ZodValidationPipe(ClaimBodySchema)) body: ClaimBody,
    @CurrentPrincipal() caller: Principal,
  ): Promise<ClaimResult> {
    return this.external.claim(caller, id, body);
  }

  @Post(':approvalId/completion')
  @HttpCode(200)
  complete(
    @Param('approvalId', approvalId) id: string,
    @Body(new ZodValidationPipe(CompletionBodySchema)) body: CompletionBody,
    @CurrentPrincipal() caller: Principal,
  ): Promise<ExternalApprovalView> {
    return this.external.complete(caller, id, body);
  }
}
