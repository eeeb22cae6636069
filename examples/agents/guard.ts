import { CountersignClient } from '@countersign/sdk';

export async function refundWithApproval(
  baseUrl: string,
  token: string,
  ticket: { id: string; orderId: string },
) {
  const countersign = new CountersignClient({ baseUrl, token }); // token: a principal with the approvals-client role
  const result = await countersign.guard(
    {
      runId: `ticket-${ticket.id}`, // with callId: the same call when guarded again, after a restart too
      callId: 'refund',
      toolName: 'refund_order',
      args: { orderId: ticket.orderId, amount: 25 },
      context: { runDescription: `support ticket ${ticket.id}` },
    },
    async (args) => `refunded ${args.amount} on order ${args.orderId}`, // runs once, with the approved arguments
    { timeoutMs: 15 * 60_000, summarize: (receipt) => receipt }, // the summary goes to the audit log
  );
  if (result.status === 'executed') return result.value;
  if (result.status === 'denied') return `refused: ${result.reason}`;
  return result.status; // 'expired', 'pending' (guard it again later) or 'already_claimed' (it ran elsewhere)
}
