import type { Tier } from '@countersign/contracts';

/** Which tools wait for a decision beyond their declared tier. `manual_only` can never be lowered. */
export class ConfirmationPolicy {
  private readonly names = new Set<string>();
  private all = false;

  requireConfirmation(...toolNames: string[]): this {
    for (const name of toolNames) this.names.add(name);
    return this;
  }

  requireConfirmationForAll(): this {
    this.all = true;
    return this;
  }

  effectiveTier(toolName: string, declared: Tier): Tier {
    if (declared === 'manual_only') return 'manual_only';
    if (declared === 'confirm' || this.all || this.names.has(toolName)) return 'confirm';
    return 'auto';
  }
}

/** Tiers by strictness: a rule may raise a tier, never lower it. */
export const TIER_RANK: Record<Tier, number> = { auto: 0, confirm: 1, manual_only: 2 };

/** The stricter of two tiers. */
export function stricter(a: Tier, b: Tier): Tier {
  return TIER_RANK[a] >= TIER_RANK[b] ? a : b;
}
