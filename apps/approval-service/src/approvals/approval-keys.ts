// Redis keys of approval state. One hash tag for all of them: the scripts touch several at once (Redis Cluster).

export function approvalKeys(keyPrefix: string) {
  const tag = `{${keyPrefix}:approvals}`;
  return {
    call: (callId: string) => `${tag}:call:${callId}`,
    pending: `${tag}:pending`,
    notices: `${tag}:notices`,
    decided: `${tag}:decided`,
    expired: `${tag}:expired`,
    trust: `${tag}:trust`,
    /** Marks a spent email-link token (by hash). */
    usedToken: (tokenHash: string) => `${tag}:used:${tokenHash}`,
    /** Remembers a Slack request signature for the replay window. */
    seenSlackSignature: (signature: string) => `${tag}:slack-seen:${signature}`,
    /** Pub/sub channel of changes, so every replica's inbox sees every change. */
    changes: `${keyPrefix}:approvals:changes`,
  };
}
export type ApprovalKeys = ReturnType<typeof approvalKeys>;

/** The trust counter of one tool for one requester (IDs and tool names never contain '|'). */
export const trustField = (requester: string, toolName: string) => `${requester}|${toolName}`;
