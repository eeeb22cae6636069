// The runs API. Every route names its caller (PrincipalGuard): a run is started in the caller's name (or, for a machine
// client with `actAs`, in the name of the user it acts for) and shown only to those who may read it.
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
import { CurrentPrincipal, type Principal, RateLimited, ZodValidationPipe } from '@countersign/platform';
import { WorkerRoute } from '../config/worker-rate-limits';
import { RunsService } from './runs.service';

// Nest's @Headers() takes no pipe: the header is validated by the same pipe, called directly.
const LAST_EVENT_ID = new ZodValidationPipe(LastEventIdSchema, 'Last-Event-ID header');

@Controller('runs')
export class RunsController {
  constructor(@Inject(RunsService) private readonly runs: RunsService) {}

  @Post()
  @HttpCode(202)
  @RateLimited(WorkerRoute.RunStart)
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

  /** The run's history, then live events until `done`; after `Last-Event-ID` when a client reconnects. */
  @Sse(':runId/events')
  events(
    @Param('runId', new ZodValidationPipe(IdSchema, 'runId')) runId: string,
    @CurrentPrincipal() caller: Principal,
    @Headers('last-event-id') lastEventId: string | undefined,
  ): Promise<Observable<MessageEvent>> {
    return this.runs.follow(runId, caller, LAST_EVENT_ID.transform(lastEventId));
  }
}
