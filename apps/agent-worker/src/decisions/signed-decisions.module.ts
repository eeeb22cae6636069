// What comes back from the approval service, signed: decisions (each checked, recorded on its parked call, and the
// run resumed when its frontier is complete) and notes that a person did a manual step. The signature check and its
// `decision.rejected` audit are DecisionSignatures', for both.
import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { DecisionApplier } from './decision-applier';
import { DecisionsProcessor, ManualStepsProcessor } from './decision-processors';
import { DecisionSignatures } from './decision-signatures';
import { ManualStepNotes } from './manual-step-notes';

@Module({
  imports: [RunsModule],
  providers: [DecisionSignatures, DecisionApplier, ManualStepNotes, DecisionsProcessor, ManualStepsProcessor],
  exports: [DecisionsProcessor, ManualStepsProcessor],
})
export class SignedDecisionsModule {}
