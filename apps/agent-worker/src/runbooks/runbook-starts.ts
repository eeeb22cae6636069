// Starting a runbook: a run of the agent `runbook.<name>` whose input is the starting state, checked here (400 naming
// the field) before the run is started as POST /runs starts one, in the caller's name.
import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { runbookAgentName, type StartRunbookBody } from '@countersign/contracts';
import type { Principal } from '@countersign/platform';
import { badField, RunsService } from '../runs/runs.service';
import { initialState } from './runbook-interpreter';
import { RunbookLibrary } from './runbook-library';
import { TemplateError } from './runbook-template';

@Injectable()
export class RunbookStarts {
  constructor(
    @Inject(RunsService) private readonly runs: Pick<RunsService, 'start'>,
    @Inject(RunbookLibrary) private readonly runbooks: Pick<RunbookLibrary, 'get' | 'names'>,
  ) {}

  async start(name: string, body: StartRunbookBody, caller: Principal): Promise<{ runId: string }> {
    const definition = this.runbooks.get(name);
    if (!definition)
      throw new NotFoundException(
        `runbook "${name}" does not exist (known: ${this.runbooks.names().join(', ') || 'none'})`,
      );
    try {
      initialState(definition, body.input, 'input');
    } catch (error) {
      if (error instanceof TemplateError)
        badField(error.field, error.message.replace(/^field "[^"]*": /, ''));
      throw error;
    }
    return this.runs.start(
      { agent: runbookAgentName(name), input: JSON.stringify(body.input), onBehalfOf: body.onBehalfOf },
      caller,
    );
  }
}
