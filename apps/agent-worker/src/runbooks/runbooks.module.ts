// The runbooks API (list, start, validate). A runbook runs as an agent of the catalog whose model is the runbook
// interpreter (runbook-model.ts): parking, decisions and execution are the runs module's, as for any run.
import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { RunbookStarts } from './runbook-starts';
import { RunbooksController } from './runbooks.controller';

@Module({
  imports: [RunsModule],
  providers: [RunbookStarts],
  controllers: [RunbooksController],
})
export class RunbooksModule {}
