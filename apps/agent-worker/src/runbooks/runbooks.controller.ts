// The runbooks API: start a runbook run (a run of the agent `runbook.<name>`, in the caller's name, as POST /runs),
// list the runbooks, and check a definition as start-up checks a file.
import { BadRequestException, Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import {
  RunbookNameSchema,
  type StartRunbookBody,
  StartRunbookBodySchema,
  ValidateRunbookBodySchema,
} from '@countersign/contracts';
import { CurrentPrincipal, type Principal, RateLimited, ZodValidationPipe } from '@countersign/platform';
import { WorkerRoute } from '../config/worker-rate-limits';
import { InvalidRunbookError, RunbookLibrary } from './runbook-library';
import { RunbookStarts } from './runbook-starts';

@Controller('runbooks')
export class RunbooksController {
  constructor(
    @Inject(RunbookStarts) private readonly starts: RunbookStarts,
    @Inject(RunbookLibrary) private readonly library: RunbookLibrary,
  ) {}

  @Get()
  list(@CurrentPrincipal() _caller: Principal): {
    runbooks: { name: string; description: string; steps: number }[];
  } {
    return {
      runbooks: this.library.names().map((name) => {
        const definition = this.library.get(name)!;
        return { name, description: definition.description, steps: Object.keys(definition.nodes).length };
      }),
    };
  }

  @Post(':name/runs')
  @HttpCode(202)
  @RateLimited(WorkerRoute.RunStart)
  start(
    @Param('name', new ZodValidationPipe(RunbookNameSchema, 'name')) name: string,
    @Body(new ZodValidationPipe(StartRunbookBodySchema)) body: StartRunbookBody,
    @CurrentPrincipal() caller: Principal,
  ): Promise<{ runId: string }> {
    return this.starts.start(name, body, caller);
  }

  /** 200 `{ valid: true, name }`, or 400 with one issue per problem, each naming the node and field. */
  @Post('validate')
  @HttpCode(200)
  validate(
    @Body(new ZodValidationPipe(ValidateRunbookBodySchema)) body: { definition?: unknown },
    @CurrentPrincipal() _caller: Principal,
  ): { valid: true; name: string } {
    try {
      return { valid: true, name: this.library.check(body.definition).name };
    } catch (error) {
      if (!(error instanceof InvalidRunbookError)) throw error;
      throw new BadRequestException({
        statusCode: 400,
        error: 'Bad Request',
        message: error.issues.join('\n'),
        issues: error.issues.map((message) => ({ path: 'definition', message })),
      });
    }
  }
}
