/** `*` matches any run of characters, `?` one character; everything else is literal. Case-sensitive. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 's');
}

export function matchesGlob(value: string, globs: string | readonly string[]): boolean {
  return (typeof globs === 'string' ? [globs] : globs).some((glob) => globToRegExp(glob).test(value));
}

/** A glob without `*` or `?`: it matches exactly its own text. */
export function isLiteralGlob(glob: string): boolean {
  return !/[*?]/.test(glob);
}

/**
 * Whether some text could match both globs. False only when it certainly cannot: their fixed beginnings (up to the
 * first `*` or `?`) or fixed endings (after the last) disagree, or, for two literal globs, they differ. True may be
 * wrong (`a*b` and `a*c*d` look alike from the ends), so callers use it where a wrong "may" errs on the safe side.
 */
export function globsMayOverlap(a: string, b: string): boolean {
  if (isLiteralGlob(a) && isLiteralGlob(b)) return a === b;
  if (isLiteralGlob(a)) return matchesGlob(a, b);
  if (isLiteralGlob(b)) return matchesGlob(b, a);
  const [prefixA, prefixB] = [fixedStart(a), fixedStart(b)];
  const [suffixA, suffixB] = [fixedEnd(a), fixedEnd(b)];
  const prefixesAgree = prefixA.startsWith(prefixB) || prefixB.startsWith(prefixA);
  const suffixesAgree = suffixA.endsWith(suffixB) || suffixB.endsWith(suffixA);
  return prefixesAgree && suffixesAgree;
}

const fixedStart = (glob: string) => glob.slice(0, glob.search(/[*?]/));
const fixedEnd = (glob: string) => glob.slice(Math.max(glob.lastIndexOf('*'), glob.lastIndexOf('?')) + 1);
