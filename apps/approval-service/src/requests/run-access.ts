// Approvers read the run a request comes from (GET /runs/:id on the agent worker): the members of the groups a request
// is routed to (when it arrives, is routed anew, escalates, or a standing rule decides it) are added to its readers.
import { Inject, Injectable } from '@nestjs/common';
import type { ApprovalRequest } from '@countersign/contracts';
import { RunReaders } from '@countersign/shared-records';
import { ApproverDirectory } from '../auth/approver-directory';
import { APPROVAL_SERVICE_CONFIG, type ApprovalServiceConfig } from '../config/approval-service.config';

@Injectable()
export class RunAccess {
  constructor(
    @Inject(APPROVAL_SERVICE_CONFIG) private readonly config: ApprovalServiceConfig,
    private readonly directory: ApproverDirectory,
    private readonly readers: RunReaders,
  ) {}

  /**
   * The members of `groups` may read the run for as long as the request stays readable here: until it expires, and the
   * retention after. Not for an external call: its run is not the worker's, and a worker run of the same ID (the client
   * chose it) must not become readable by it.
   */
  async allowToRead(request: ApprovalRequest, groups: readonly string[], expiresAt: number): Promise<void> {
    if (request.external) return;
    const members = this.directory.membersOf(groups).map((a) => a.id);
    const ttlMs = Math.max(0, expiresAt - Date.now()) + this.config.env.APPROVAL_RETENTION;
    return this.readers.add(request.runId, members, ttlMs);
  }
}
