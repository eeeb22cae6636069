// Standing rules over HTTP: list (approvers and rule-writers), create and revoke (rule-writers). The inbox and the CLI
// use these routes too (the inbox with its session and the X-Countersign-Inbox header).
import {
  Body,
  Catch,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpCode,
  Param,
  Post,
  UseFilters,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import {
  IdSchema,
  NewStandingRuleSchema,
  type NewStandingRule,
  type StandingRule,
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
import { StandingRuleRefusedError, StandingRulesService } from './standing-rules.service';

const STATUS = { invalid: 400, forbidden: 403, not_found: 404, conflict: 409 } as const;

@Catch(StandingRuleRefusedError)
export class StandingRuleRefusedFilter implements ExceptionFilter {
  catch(error: StandingRuleRefusedError, host: ArgumentsHost): void {
    const status = STATUS[error.kind];
    host
      .switchToHttp()
      .getResponse<Response>()
      .status(status)
      .json({ statusCode: status, error: error.kind, message: error.message });
  }
}

@Controller('standing-rules')
@UseFilters(StandingRuleRefusedFilter)
export class StandingRulesController {
  constructor(private readonly rules: StandingRulesService) {}

  @Get()
  async list(@CurrentPrincipal() caller: Principal): Promise<StandingRule[]> {
    if (!this.rules.maySee(caller))
      throw new ForbiddenException('only approvers and rule-writers may read the standing rules');
    return this.rules.list();
  }

  // Creating and revoking rules change what is approved: limited like decisions.
  @Post()
  @HttpCode(201)
  @RateLimited(ApprovalRoute.Decision)
  @RequireRole('rule-writer')
  create(
    @Body(new ZodValidationPipe(NewStandingRuleSchema)) body: NewStandingRule,
    @CurrentPrincipal() caller: Principal,
  ): Promise<StandingRule> {
    return this.rules.create(body, caller);
  }

  @Delete(':id')
  @RateLimited(ApprovalRoute.Decision)
  @RequireRole('rule-writer')
  revoke(
    @Param('id', new ZodValidationPipe(IdSchema, 'id')) id: string,
    @CurrentPrincipal() caller: Principal,
  ): Promise<StandingRule> {
    return this.rules.revoke(id, caller);
  }
}
