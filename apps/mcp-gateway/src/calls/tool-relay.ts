// Sends one call to the tool's server and hands back the server's answer as it came (content, structured content,
// `_meta`, `isError`), progress and cancellation passed through, so that for an auto-tier tool a client cannot tell
// the gateway from the server. Only secrets the gateway handed the server (config `$secret`s) are scrubbed out.
import { Injectable } from '@nestjs/common';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { CALL_META, SecretSource } from '@countersign/tool-providers';
import type { GatewayTool } from '../tools/gateway-catalog';

export interface RelayOptions {
  /** The client cancelled (or went away): the server is told (`notifications/cancelled`). */
  signal: AbortSignal;
  /** The client's own `_meta` (its progress token left out: the relay sets its own towards the server). */
  meta: Record<string, unknown>;
  /** Which Countersign call this is, added to `meta` for the server's logs. */
  ids: { runId: string; callId: string; userId: string; agent: string };
  /** The server's progress, for the client. */
  onprogress?: (progress: Progress) => void;
}

@Injectable()
export class ToolRelay {
  constructor(private readonly secrets: SecretSource) {}

  /** The server's result. Throws ProviderCallError when there is none (unreachable, timed out, refused, cancelled). */
  async relay(
    tool: GatewayTool,
    args: Record<string, unknown>,
    options: RelayOptions,
  ): Promise<CallToolResult> {
    const result = await tool.server.relay(tool.provided.remoteName, args, {
      signal: options.signal,
      onprogress: options.onprogress,
      meta: {
        ...options.meta,
        [CALL_META.runId]: options.ids.runId,
        [CALL_META.callId]: options.ids.callId,
        [CALL_META.agent]: options.ids.agent,
        [CALL_META.userId]: options.ids.userId,
      },
    });
    return this.scrub(result) as CallToolResult;
  }

  /** Every string in `value` with the secrets handed out replaced; the same object when none occurs. */
  private scrub(value: unknown): unknown {
    if (typeof value === 'string') return this.secrets.scrub(value);
    if (Array.isArray(value)) {
      const items = value.map((item) => this.scrub(item));
      return items.some((item, i) => item !== value[i]) ? items : value;
    }
    if (value && typeof value === 'object') {
      let changed = false;
      const entries = Object.entries(value).map(([key, item]) => {
        const scrubbed = this.scrub(item);
        changed ||= scrubbed !== item;
        return [key, scrubbed] as const;
      });
      return changed ? Object.fromEntries(entries) : value;
    }
    return value;
  }
}
