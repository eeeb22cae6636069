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
