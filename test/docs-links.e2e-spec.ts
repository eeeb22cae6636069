// The documentation's own links: every relative link and anchor in the repository's Markdown (README.md, docs/, the
// bench, reliability and SDK READMEs) leads somewhere, and the README stays short. (No Redis or network needed.)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(__dirname, '..');
const README_MAX_LINES = 250;

/**
 * Every Markdown file of the repository (tracked, or new and not ignored), as paths relative to its root. Git's own
 * list, so what an install puts in ignored folders (node_modules, .ci/node) is never read as ours.
 */
function markdownFiles(): string[] {
  const listed = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.md'],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  return [...new Set(listed.split('\n').filter(Boolean))].filter((file) => existsSync(join(root, file)));
}

/** The text outside fenced code blocks. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text outside code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** Link targets: `[text](target)` and `![alt](target)`, without an optional title. */
function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    ([, target]) => target,
  );
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const headings = withoutFences(markdown).replace(/`([^`\n]*)`/g, '$1');
  for (const [, heading] of headings.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

const files = markdownFiles();
const read = (file: string) => readFileSync(join(root, file), 'utf8');

it('finds the README and the docs', () => {
  expect(files).toEqual(expect.arrayContaining(['README.md', join('docs', 'README.md')]));
});

it(`keeps README.md at ${README_MAX_LINES} lines or fewer`, () => {
  const lines = read('README.md').replace(/\n$/, '').split('\n').length;
  expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
});

it.each(files)('every relative link and anchor in %s resolves', (file) => {
  const broken: string[] = [];
  for (const target of linkTargets(read(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: … are not checked here
    const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
    const path = pathPart === '' ? join(root, file) : join(root, dirname(file), decodeURI(pathPart));
    if (!existsSync(path)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!path.endsWith('.md')) broken.push(`${target}: an anchor into a file that is not Markdown`);
    else if (!anchors(readFileSync(path, 'utf8')).has(decodeURIComponent(anchor)))
      broken.push(`${target}: no heading with that anchor`);
  }
  expect(broken).toEqual([]);
});

it('the anchor rule matches GitHub on the kinds of heading the docs use', () => {
  const slugs = anchors(
    [
      '# Countersign',
      '## Quick start (fresh machine)',
      '### `@countersign/sdk`: `guard()`',
      '### The approvals API (`/external-approvals`)',
      '## Notes',
      '## Notes',
      '```bash',
      '# not a heading',
      '```',
    ].join('\n'),
  );
  expect([...slugs]).toEqual([
    'countersign',
    'quick-start-fresh-machine',
    'countersignsdk-guard',
    'the-approvals-api-external-approvals',
    'notes',
    'notes-1',
  ]);
});

/** Paths of this repository the prose names in inline code (`apps/…`, `test/…`, …), without a line suffix. */
function repoPaths(markdown: string): string[] {
  const named = withoutFences(markdown).matchAll(
    /`((?:apps|libs|test|scripts|config|bench|examples|docker)\/[^`\s*<>{}…]+)`/g,
  );
  return [...named]
    .map(([, path]) => path.replace(/[.,:;)]+$/, '').replace(/:\d+(-\d+)?$/, ''))
    .filter((path) => !path.split('/').includes('dist')); // build output, made by a command the docs name
}

it.each(files)('every repository path %s names in code exists', (file) => {
  const missing = repoPaths(read(file)).filter((path) => !existsSync(join(root, path)));
  expect(missing).toEqual([]);
});
