// Reading the shared HMAC-chained audit log, a page at a time and only what the caller may see, and checking that
// every writer's chain is intact (audit readers only).
import { Controller, Get, Query, Res } from '@nestjs/common';
import type { HttpResponse as Response } from '../core/http-types';
import { AuditQuerySchema, type AuditEntry, type AuditQuery } from '@countersign/contracts';
import { CurrentPrincipal, RequireRole, ZodValidationPipe, type Principal } from '@countersign/platform';
import { type ChainCheck } from '@countersign/audit';
import { AuditTrail } from '../core/audit-trail';
import { AuditVisibility } from './audit-visibility';

@Controller('audit')
export class AuditController {
  constructor(
    private readonly audit: AuditTrail,
    private readonly visibility: AuditVisibility,
  ) {}

  /**
   * The newest `limit` entries the caller may see (matching runId/callId), oldest first. One request reads a bounded
   * part of the stream, newest first; when older entries remain, a `Link: <…>; rel="next"` header points at the page
   * of older ones. Entries the caller may not see are left out after reading, so a page may hold fewer (even none).
   */
  @Get()
  async read(
    @Query(new ZodValidationPipe(AuditQuerySchema, 'query')) query: AuditQuery,
    @CurrentPrincipal() caller: Principal,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AuditEntry[]> {
    const visible = this.visibility.for(caller);
    if (visible === 'none') return [];
    const page = await this.audit.log.readPage({
      runId: query.runId,
      callId: query.callId,
      limit: query.limit,
      before: query.cursor,
      visible: visible === 'all' ? undefined : visible,
    });
    if (page.next) res.setHeader('Link', `<${nextPageUrl(query, page.next)}>; rel="next"`);
    return page.entries;
  }

  /**
   * `{ intact, entries, chains, keys, checkpoint?, brokenAt? }`: where a chain breaks if an entry, a head or the
   * retention checkpoint was edited or removed, or a chain was rewritten without the signing key.
   */
  @Get('verify')
  @RequireRole('audit-reader')
  verify(): Promise<ChainCheck> {
    return this.audit.verify();
  }
}

/** The page of older entries, relative to this service's root (RFC 8288 `Link` target): same filter and limit. */
function nextPageUrl(query: AuditQuery, cursor: string): string {
  const params = new URLSearchParams();
  if (query.runId) params.set('runId', query.runId);
  if (query.callId) params.set('callId', query.callId);
  params.set('limit', String(query.limit));
  params.set('cursor', cursor);
  return `/audit?${params}`;
}
