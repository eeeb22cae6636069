// A provider tool's tier comes from Countersign's config, never from the provider: patterns over the provider's own
// tool names (`"*": "confirm"`, `"read_*": "auto"`), the most specific one winning. A tool no pattern names is
// `confirm`. The provider's hints (MCP annotations) may only raise that tier, because a server's hints are not trusted.
import { stricter, TIER_RANK } from '@countersign/authorization';
import type { Tier } from '@countersign/contracts';
import { NamePatterns } from './name-patterns';

export { stricter, TIER_RANK };

/** MCP tool annotations that bear on the tier (all optional, all untrusted). */
export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

export class TierRules {
  private readonly patterns: NamePatterns<Tier>;

  /** @param patterns tool-name glob → tier, e.g. `{ "*": "confirm", "read_*": "auto" }` */
  constructor(patterns: Readonly<Record<string, Tier>> = {}) {
    // Two equally specific patterns: the stricter tier (fail closed).
    this.patterns = new NamePatterns(patterns, (a, b) => TIER_RANK[a] - TIER_RANK[b]);
  }

  /**
   * The tier for a provider's tool `name`. An exact name beats any pattern; among patterns the one with the most
   * literal characters wins; on a tie the stricter tier. No match: `confirm`. Then hints may raise it:
   * `destructiveHint: true`, or `readOnlyHint: false` without `destructiveHint: false` (MCP's default for a tool that
   * writes is destructive), make it at least `confirm`. A tool without hints is not raised: the config decides.
   */
  tierOf(name: string, hints: ToolHints = {}): Tier {
    return raiseByHints(this.patterns.match(name)?.value ?? 'confirm', hints);
  }
}

export function raiseByHints(tier: Tier, hints: ToolHints): Tier {
  const destructive =
    hints.destructiveHint === true || (hints.readOnlyHint === false && hints.destructiveHint !== false);
  return destructive ? stricter(tier, 'confirm') : tier;
}
