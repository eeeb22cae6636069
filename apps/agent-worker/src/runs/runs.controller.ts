// The runs API. Every route names its caller (PrincipalGuard): a run is started in the caller's name (or, for a machine
// client with `actAs`, in the name of the user it acts for) and shown only to those who may read it.
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Sse, type MessageEvent } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { IdSchema, type RunView, type StartRunBody, StartRunBodySchema } from '@countersign/contracts';
import { CurrentPrincipal, type Principal, ZodValidationPipe } from '@countersign/platform';
import { RunsService } from './runs.service';

@Controller('runs')
export class RunsController {
  constructor(@Inject(RunsService) private readonly runs: RunsService) {}

  @Post()
  @HttpCode(202)
  start(
    @Body(new ZodValidationPipe(StartRunBodySchema)) body: StartRunBody,
    @CurrentPrincipal() caller: Principal,
  ): Promise<{ runId: string }> {
    return this.runs.start(body, caller);
  }

  @Get(':runId')
  view(
    @Param('runId', new ZodValidationPipe(IdSchema, 'runId')) runId: string,
    @CurrentPrincipal() caller: Principal,
  ): Promise<RunView> {
    return this.runs.view(runId, caller);
  }

  @Sse(':runId/events')
  events(
    @Param('runId', new ZodValidationPipe(IdSchema, 'runId')) runId: string,
    @CurrentPrincipal() caller: Principal,
  ): Promise<Observable<MessageEvent>> {
    return this.runs.follow(runId, caller);
  }
}
