// Settings keyed by tool-name patterns (`"*"`, `"read_*"`, `"write_file"`), where the most specific pattern wins.

/** `*` matches any run of characters, `?` one; everything else is literal (as in the approval routing rules). */
export function globRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 's');
}

interface Entry<T> {
  pattern: string;
  value: T;
  regex: RegExp;
  /** Characters that are not wildcards: more means more specific. */
  literal: number;
}

export class NamePatterns<T> {
  private readonly entries: Entry<T>[];

  /**
   * @param patterns glob → value
   * @param tieBreak > 0 when the first value should win between two equally specific patterns
   */
  constructor(
    patterns: Readonly<Record<string, T>>,
    private readonly tieBreak: (a: T, b: T) => number,
  ) {
    this.entries = Object.entries(patterns).map(([pattern, value]) => ({
      pattern,
      value,
      regex: globRegExp(pattern),
      literal: pattern.replace(/[*?]/g, '').length,
    }));
  }

  /**
   * The entry for `name`: an exact name beats any pattern; among patterns the one with the most literal characters
   * wins; on a tie, `tieBreak` decides. Undefined when nothing matches.
   */
  match(name: string): { pattern: string; value: T } | undefined {
    let best: Entry<T> | undefined;
    for (const entry of this.entries) {
      if (!entry.regex.test(name)) continue;
      if (!best || this.compare(entry, best, name) > 0) best = entry;
    }
    return best && { pattern: best.pattern, value: best.value };
  }

  private compare(a: Entry<T>, b: Entry<T>, name: string): number {
    const exact = Number(a.pattern === name) - Number(b.pattern === name);
    if (exact !== 0) return exact;
    if (a.literal !== b.literal) return a.literal - b.literal;
    return this.tieBreak(a.value, b.value);
  }
}

/** True when `name` matches one of the globs. */
export function matchesAny(name: string, globs: readonly string[]): boolean {
  return globs.some((glob) => globRegExp(glob).test(name));
}
