// Which audit entries a caller may read: all of them with the `audit-reader` role; otherwise those of requests the
// caller may see (maySee: routed to one of their groups now, or they took part), and those of runs the caller may read
// because a call of theirs was routed so.
import { Injectable } from '@nestjs/common';
import type { AuditEntry } from '@countersign/contracts';
import { hasRole, type Principal } from '@countersign/platform';
import { RunReaders } from '@countersign/shared-records';
import { ApproverDirectory } from '../auth/approver-directory';
import { ApprovalReadModel } from '../requests/approval-read-model';
import type { StoredApproval } from '../requests/approval-types';
import { maySee } from '../votes/deciders';

export type AuditEntryFilter = (entry: AuditEntry) => Promise<boolean>;

@Injectable()
export class AuditVisibility {
  constructor(
    private readonly readModel: ApprovalReadModel,
    private readonly readers: RunReaders,
    private readonly directory: ApproverDirectory,
  ) {}

  /**
   * `all` for an audit reader; `none` for a caller in no group (nothing is ever routed to them); else a filter for one
   * request, which looks each call's groups and each run's readers up once.
   *
   * An entry of a call: visible when the caller may see one of its requests (`maySee`, the one rule the request reads
   * use: routed to one of the caller's groups now — after a re-route, the new ones —, or the caller voted on, edited
   * or marked it done). A call the service never routed
   * (an automatic tool call, or one whose request aged out) falls back to its run. An entry of a run only: visible to
   * the run's readers (the members of the groups its calls were routed to). Anything else (service events): audit
   * readers only.
   */
  for(caller: Principal): 'all' | 'none' | AuditEntryFilter {
    if (hasRole(caller, 'audit-reader')) return 'all';
    const groups = new Set(this.directory.groupsOf(caller.id));
    if (groups.size === 0) return 'none';
    const viewer = { id: caller.id, groups: [...groups] };
    const callRequests = new Map<string, Promise<StoredApproval[]>>();
    const runReadable = new Map<string, Promise<boolean>>();
    return async (entry) => {
      if (entry.callId) {
        // A call ID may name requests of several runs (models choose them): only the entry's own run's count.
        const callId = entry.callId;
        const runId = entry.runId;
        const requests = await once(callRequests, `${runId ?? ''} ${callId}`, async () =>
          (await this.readModel.requestsOfCall(callId)).filter(
            (a) => runId === undefined || a.request.runId === runId,
          ),
        );
        if (requests.length > 0) return requests.some((a) => maySee(viewer, a));
      }
      if (!entry.runId) return false;
      const runId = entry.runId;
      return once(runReadable, runId, () => this.readers.includes(runId, caller.id));
    };
  }
}

function once<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let value = cache.get(key);
  if (!value) cache.set(key, (value = load()));
  return value;
}
