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
