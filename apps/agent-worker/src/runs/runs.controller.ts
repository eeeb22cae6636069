import {
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Sse,
  type MessageEvent,
} from '@nestjs/common';
import type { Observable } from 'rxjs';
import {
  IdSchema,
  LastEventIdSchema,
  type RunView,
  type StartRunBody,
  StartRunBodySchema,
} from '@countersign/contracts';
import { ZodValidationPipe } from '@countersign/platform';
import { RunsService } from './runs.service';

// Nest's @Headers() takes no pipe: the header is validated by the same pipe, called directly.
const LAST_EVENT_ID = new ZodValidationPipe(LastEventIdSchema, 'Last-Event-ID header');

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

  /** The run's history, then live events until `done`; after `Last-Event-ID` when a client reconnects. */
  @Sse(':runId/events')
  events(
    @Param('runId', new ZodValidationPipe(IdSchema, 'runId')) runId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
  ): Promise<Observable<MessageEvent>> {
    return this.runs.follow(runId, LAST_EVENT_ID.transform(lastEventId));
  }
}
