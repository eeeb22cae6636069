// A run as its hash stores it, and back: the one place that knows the stored form (short field names, defaults left
// out). A parked run is at rest by the 100,000s, so every byte it does not store counts; the Lua scripts read the
// same form (see lua/apply-decision-1.lua for the call body, includes/job-owner.lua for the owner).
import { type CallState, ledgerFields } from '@countersign/call-ledger';
import type { ChatMessage } from '@countersign/contracts';
import { callFields } from './run-keys';
import type {
  CallResult,
  FrontierCall,
  Lease,
  ManualNote,
  ParkedCallBody,
  RunRecord,
  StoredDecision,
} from './run-state';

/** Fields a new run is created with (its start job's). */
export type NewRun = Pick<
  RunRecord,
  'runId' | 'agent' | 'userId' | 'submittedBy' | 'sessionId' | 'scopes' | 'messages'
> & {
  script?: unknown[];
};

/** The run's `owner` field: "<jobId>|<lock token>|<started>" (ownerOf in includes/job-owner.lua). */
export function ownerOf(lease: Lease): string {
  return `${lease.jobId}|${lease.token}|${lease.started}`;
}

/**
 * A parked call's body as stored: without its ID (the field name is the ID), with short names, and without what most
 * parked calls share, which decodeBody (and the Lua scripts) read as defaults: the first request's attempt (0) and
 * reason (confirmation_required), the tier of a call that waits (confirm) and the first position in its turn (0).
 */
interface StoredBody {
  name: string;
  args: Record<string, unknown>;
  fp: string;
  defHash: string;
  rq?: string;
  tier?: ParkedCallBody['tier'];
  i?: number;
  attempt?: number;
  reason?: ParkedCallBody['reason'];
  route?: ParkedCallBody['route'];
  pre?: ParkedCallBody['precondition'];
}

export function encodeBody(body: ParkedCallBody): string {
  const stored: StoredBody = {
    name: body.name,
    args: body.args,
    fp: body.fingerprint,
    defHash: body.definitionHash,
    ...(body.requestId !== undefined ? { rq: body.requestId } : {}),
    ...(body.tier !== 'confirm' ? { tier: body.tier } : {}),
    ...(body.position !== 0 ? { i: body.position } : {}),
    ...(body.attempt !== 0 ? { attempt: body.attempt } : {}),
    ...(body.reason !== 'confirmation_required' ? { reason: body.reason } : {}),
    ...(body.route ? { route: body.route } : {}),
    ...(body.precondition ? { pre: body.precondition } : {}),
  };
  return JSON.stringify(stored);
}

export function decodeBody(id: string, json: string): ParkedCallBody {
  const stored = JSON.parse(json) as StoredBody;
  return {
    id,
    name: stored.name,
    args: stored.args,
    tier: stored.tier ?? 'confirm',
    fingerprint: stored.fp,
    definitionHash: stored.defHash,
    attempt: stored.attempt ?? 0,
    reason: stored.reason ?? 'confirmation_required',
    ...(stored.rq !== undefined ? { requestId: stored.rq } : {}),
    position: stored.i ?? 0,
    ...(stored.route ? { route: stored.route } : {}),
    ...(stored.pre ? { precondition: stored.pre } : {}),
  };
}

/** The hash fields of a frontier's call: its body, and its ledger state, decision and result (field, value, ...). */
export function frontierFields(call: FrontierCall): string[] {
  const id = call.body.id;
  const ledger = ledgerFields(callFields.prefix(id));
  const fields = [callFields.body(id), encodeBody(call.body), ledger.state, call.state];
  if (call.decision) fields.push(callFields.decision(id), JSON.stringify(call.decision));
  if (call.result) fields.push(ledger.result, JSON.stringify(call.result));
  return fields;
}

/** Only what a run needs to go on: a parked run is at rest in Redis, possibly 100,000s of them. */
export function newRunFields(run: NewRun): Record<string, string> {
  const fields: Record<string, string> = {
    agent: run.agent,
    userId: run.userId,
    messages: JSON.stringify(run.messages),
  };
  if (run.scopes.length > 0) fields.scopes = JSON.stringify(run.scopes);
  if (run.submittedBy) fields.submittedBy = run.submittedBy;
  if (run.sessionId) fields.sessionId = run.sessionId;
  if (run.script) fields.script = JSON.stringify(run.script);
  return fields;
}

/**
 * A scripted run's script with the turns already played (one per assistant message) blanked, so a parked
 * run keeps only what is left to play; the scripted model indexes turns by counting assistant messages.
 */
export function unplayed(
  script: NonNullable<RunRecord['script']>,
  messages: ChatMessage[],
): RunRecord['script'] {
  const played = messages.filter((m) => m.role === 'assistant').length;
  return script.map((turn, i) => (i < played ? null : turn));
}

/** A flat HGETALL reply from a script ([field, value, ...]) as an object. */
export function pairs(flat: string[] | undefined): Record<string, string> {
  const hash: Record<string, string> = {};
  if (flat) for (let i = 0; i < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
  return hash;
}

/** The run hash: header fields, and the frontier's call fields (`c:<callId>...`, see callFields). */
export function toRunRecord(runId: string, hash: Record<string, string>): RunRecord {
  return {
    runId,
    agent: hash.agent,
    userId: hash.userId,
    submittedBy: hash.submittedBy || undefined,
    sessionId: hash.sessionId || undefined,
    scopes: hash.scopes ? (JSON.parse(hash.scopes) as string[]) : [],
    status: hash.status as RunRecord['status'],
    messages: hash.messages ? (JSON.parse(hash.messages) as ChatMessage[]) : [],
    script: hash.script ? (JSON.parse(hash.script) as RunRecord['script']) : undefined,
    result: hash.result || undefined,
    error: hash.error || undefined,
    frontier: parseFrontier(hash),
    notes: parseNotes(hash.notes),
  };
}

/** The `notes` field (a JSON array the note script appends to as text); what does not read as a note is left out. */
export function parseNotes(json: string | null | undefined): ManualNote[] {
  if (!json) return [];
  try {
    const notes = JSON.parse(json) as unknown;
    return Array.isArray(notes) ? notes.filter(isNote) : [];
  } catch {
    return [];
  }
}

function isNote(n: unknown): n is ManualNote {
  const note = n as Partial<ManualNote> | null;
  return (
    typeof note?.requestId === 'string' && typeof note.callId === 'string' && typeof note.text === 'string'
  );
}

function parseFrontier(hash: Record<string, string>): FrontierCall[] {
  const calls: FrontierCall[] = [];
  for (const [field, value] of Object.entries(hash)) {
    const id = callFields.idOfBody(field);
    if (id === undefined) continue;
    const ledger = ledgerFields(callFields.prefix(id));
    const decision = hash[callFields.decision(id)];
    const result = hash[ledger.result];
    calls.push({
      body: decodeBody(id, value),
      state: hash[ledger.state] as CallState,
      decision: decision ? (JSON.parse(decision) as StoredDecision) : undefined,
      result: result ? (JSON.parse(result) as CallResult) : undefined,
    });
  }
  return calls.sort((a, b) => a.body.position - b.body.position);
}
