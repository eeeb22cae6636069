// A request's Redis hash, read into the domain (parseStored), and the names of the fields code outside the Lua scripts
// writes or reads (each script's header lists every field it touches). The storage spellings (fp, rev, was:, …) stay
// here and in the scripts.
import {
  ApprovalRequestSchema,
  type ApprovalRequest,
  type ApprovalStatus,
  type DecidedBy,
  type DecisionValue,
} from '@countersign/contracts';
import { VoteSchema, type Edit, type NewApproval, type StoredApproval, type Vote } from './approval-types';

/** Fields of a request's hash named outside the scripts. */
export const RequestField = {
  callId: 'callId',
  groups: 'groups',
  attempt: 'attempt',
  expiresAt: 'expiresAt',
  /** An approver the request was emailed to (an expiry is emailed to them). */
  emailed: (approver: string) => `emailed:${approver}`,
  /** A Slack message showing the request: its channel, its `ts` as the value. */
  slackMessage: (channel: string) => `slack:${channel}`,
  /** One delivery's reservation or record (see notifications/delivery-ledger.ts). */
  delivery: (key: string) => `delivery:${key}`,
} as const;

export function parseRequest(json: unknown): ApprovalRequest {
  return ApprovalRequestSchema.parse(JSON.parse(String(json)));
}

/** A request's hash as read by HGETALL; undefined when it holds no request (gone, or never stored). */
export function parseStored(hash: Record<string, string>): StoredApproval | undefined {
  if (!hash.request) return undefined;
  const { votes, setAside, slackMessages, emailed } = parseListedFields(hash);
  const edited = parseEdit(hash);
  return {
    request: parseRequest(hash.request),
    status: hash.status as ApprovalStatus,
    groups: commaList(hash.groups),
    quorum: Number(hash.quorum),
    escalationGroups: commaList(hash.escalationGroups),
    routeVersion: Number(hash.routeVersion ?? 0),
    channels: commaList(hash.channels),
    createdAt: Number(hash.createdAt),
    expiresAt: Number(hash.expiresAt),
    votes,
    setAside,
    edited,
    trustCount: Number(hash.trustCount ?? 0),
    outcome: parseOutcome(hash, edited),
    done: hash.doneBy
      ? { by: hash.doneBy, at: hash.doneAt, ...(hash.doneNote ? { note: hash.doneNote } : {}) }
      : undefined,
    published: hash.published === '1',
    slackMessages,
    emailed,
    route: hash.rule ? { rule: hash.rule, why: hash.why ?? '' } : undefined,
  };
}

/**
 * A request as create-request-7.lua has just stored it (what parseStored reads back before anything else changes it):
 * pending or a notice, no votes, route version 0. For RecentRequests, which keeps it for the vote's check.
 */
export function storedAsCreated(
  input: NewApproval & { status: 'pending' | 'notice' },
  trustCount: number,
): StoredApproval {
  return {
    request: input.request,
    status: input.status,
    groups: input.groups,
    quorum: input.quorum,
    escalationGroups: input.status === 'pending' ? (input.escalation?.groups ?? []) : [],
    routeVersion: 0,
    channels: input.channels,
    createdAt: input.now,
    expiresAt: input.expiresAt,
    votes: [],
    setAside: [],
    trustCount,
    published: false,
    slackMessages: [],
    emailed: [],
    route: input.route,
  };
}

/** The fields one per approver or channel: votes (`vote:`), votes set aside (`was:`), Slack messages, emailed. */
function parseListedFields(hash: Record<string, string>) {
  const votes: Vote[] = [];
  const setAside: Vote[] = [];
  const slackMessages: { channel: string; ts: string }[] = [];
  const emailed: string[] = [];
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith('vote:')) votes.push(VoteSchema.parse(JSON.parse(value)));
    if (field.startsWith('was:')) setAside.push(VoteSchema.parse(JSON.parse(value)));
    if (field.startsWith('slack:')) slackMessages.push({ channel: field.slice('slack:'.length), ts: value });
    if (field.startsWith('emailed:')) emailed.push(field.slice('emailed:'.length));
  }
  votes.sort((a, b) => a.at.localeCompare(b.at));
  setAside.sort((a, b) => a.at.localeCompare(b.at));
  return { votes, setAside, slackMessages, emailed };
}

function parseEdit(hash: Record<string, string>): Edit | undefined {
  if (!hash.editedArgs) return undefined;
  return {
    args: JSON.parse(hash.editedArgs) as Record<string, unknown>,
    fingerprint: hash.fp,
    by: hash.editedBy,
    at: hash.editedAt,
    rev: Number(hash.rev ?? 0),
  };
}

function parseOutcome(hash: Record<string, string>, edited: Edit | undefined): StoredApproval['outcome'] {
  if (!hash.outcomeDecision) return undefined;
  return {
    decision: hash.outcomeDecision as DecisionValue,
    decidedBy: hash.outcomeDecidedBy as DecidedBy,
    approvers: commaList(hash.outcomeApprovers),
    reason: hash.outcomeReason || undefined,
    decidedAt: hash.outcomeAt,
    // Only an approval by people runs edited arguments; an expiry or a deny after an edit runs nothing.
    ...(edited && hash.outcomeDecision === 'approve' && hash.outcomeDecidedBy === 'person'
      ? { args: edited.args }
      : {}),
    ...(hash.standingRule ? { rule: hash.standingRule } : {}),
    ...(hash.outcomeResponse ? { response: hash.outcomeResponse } : {}),
  };
}

/** Groups and channels are kept as comma-separated lists (IDs never contain a comma). */
const commaList = (value: string | undefined): string[] => (value ? value.split(',') : []);
