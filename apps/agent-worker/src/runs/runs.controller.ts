import { Body, Controller, Get, HttpCode, Inject, Param, Post, Sse, type MessageEvent } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { IdSchema, type RunView, type StartRunBody, StartRunBodySchema } from '@countersign/contracts';
import { ZodValidationPipe } from '@countersign/platform';
import { RunsService } from './runs.service';

@Controller('runs')
export class RunsController {
  constructor(@Inject(RunsService) private readonly runs: RunsService) {}

  @Post()
  @HttpCode(202)
  start(@Body(new ZodValidationPipe(StartRunBodySchema)) body: StartRunBody): Promise<{ runId: string }> {
    return this.runs.start(body);
  }

  @Get(':runId')
  view(@Param('runId', new ZodValidationPipe(IdSchema, 'runId')) runId: string): Promise<RunView> {
    return this.runs.view(runId);
  }

  @Sse(':runId/events')
  events(
    @Param('runId', new ZodValidationPipe(IdSchema, 'runId')) runId: string,
  ): Promise<Observable<MessageEvent>> {
    return this.runs.follow(runId);
  }
}
