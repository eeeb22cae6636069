// Expiry and escalation: the due timers each request's scripts keep, the sweep that runs them on one replica at a
// time, and what each does when it is due.
import { Module } from '@nestjs/common';
import { RedisConnections } from '@countersign/platform';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';
import type { ApprovalKeys } from '../core/approval-keys';
import { CoreModule } from '../core/core.module';
import { APPROVAL_KEYS } from '../core/tokens';
import { DecisionsModule } from '../decisions/decisions.module';
import { NotificationsModule } from '../notifications/notifications.module';
import { RequestsModule } from '../requests/requests.module';
import { DueTimers } from './due-timers';
import { TimerStore } from './timer-store';
import { TimerSweep } from './timer-sweep';
import { TimersService } from './timers.service';

@Module({
  imports: [CoreModule, RequestsModule, DecisionsModule, NotificationsModule],
  providers: [
    {
      provide: DueTimers,
      inject: [RedisConnections, APPROVAL_KEYS],
      useFactory: (redis: RedisConnections, keys: ApprovalKeys) => new DueTimers(redis.commands, keys),
    },
    {
      provide: TimerStore,
      inject: [RedisConnections, APPROVAL_KEYS, APPROVAL_SERVICE_CONFIG],
      useFactory: (redis: RedisConnections, keys: ApprovalKeys, { env }: ApprovalServiceConfig) =>
        new TimerStore(redis.commands, keys, env.APPROVAL_RETENTION, env.TIMER_LEASE_MS),
    },
    TimersService,
    TimerSweep,
  ],
  exports: [DueTimers, TimersService],
})
export class TimersModule {}
