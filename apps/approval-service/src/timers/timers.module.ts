// Expiry and escalation: the due timers each request's scripts keep, the sweep that runs them on one replica at a
// time, and what each does when it is due.
import { Module } from '@nestjs/common';
import { CoreModule } from '../core/core.module';
import { provideSettlingStore, provideStore } from '../core/store-provider';
import { DecisionsModule } from '../decisions/decisions.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { RequestsModule } from '../requests/requests.module';
import { DueTimers } from './due-timers';
import { TimerStore } from './timer-store';
import { TimerSweep } from './timer-sweep';
import { TimersService } from './timers.service';

@Module({
  imports: [CoreModule, RequestsModule, DecisionsModule, NotificationsModule],
  providers: [provideStore(DueTimers), provideSettlingStore(TimerStore), TimersService, TimerSweep],
  exports: [DueTimers, TimersService],
})
export class TimersModule {}
