// Reading the shared hash-chained audit log, and checking that every writer's chain is intact.
import { Controller, Get, Query } from '@nestjs/common';
import type { z } from 'zod';
import { AuditQuerySchema, type AuditEntry } from '@countersign/contracts';
import { ZodValidationPipe, type ChainCheck } from '@countersign/platform';
import { AuditTrail } from '../core/audit-trail';

@Controller('audit')
export class AuditController {
  constructor(private readonly audit: AuditTrail) {}

  /** Oldest first; `limit` keeps the newest entries. */
  @Get()
  read(
    @Query(new ZodValidationPipe(AuditQuerySchema, 'query')) query: z.infer<typeof AuditQuerySchema>,
  ): Promise<AuditEntry[]> {
    return this.audit.log.read(query);
  }

  /** `{ intact, entries, chains, brokenAt? }`: where a chain breaks if an entry or a head was edited or removed. */
  @Get('verify')
  verify(): Promise<ChainCheck> {
    return this.audit.log.verify();
  }
}
