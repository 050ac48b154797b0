/**
 * The repository is self-contained: every relative link in its Markdown leads to a file (and
 * heading) inside it, and no file points at a path outside the repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Tracked files and new ones git does not ignore, as a clone (plus work in progress) has them. */
const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && existsSync(join(root, f)));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

describe('documentation', () => {
  const markdown = files.filter((f) => f.endsWith('.md') && !f.startsWith('etc/'));

  it('the guide exists, and every relative link in the Markdown leads to a file and heading in the repository', () => {
    for (const page of ['docs/README.md', 'docs/concepts.md', 'docs/top-k.md', 'docs/testing.md', 'docs/architecture.md']) expect(markdown).toContain(page);
    const broken: string[] = [];
    let links = 0;
    for (const file of markdown) {
      const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        links++;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const absolute = path === '' ? join(root, file) : resolve(dirname(join(root, file)), path);
        const inside = !relative(root, absolute).startsWith('..');
        if (!inside || !existsSync(absolute)) {
          broken.push(`${file}: ${target} (${inside ? 'no such file' : 'outside the repository'})`);
        } else if (anchor !== undefined && statSync(absolute).isFile() && !anchorsOf(absolute).has(anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor})`);
        }
      }
    }
    expect(links).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('no file refers to a path outside the repository', () => {
    const outside = /\.\.\/shared|shared\/SPEC|SPEC\.md|\/work\/(?:shared|wt|main)/;
    const offenders = files
      .filter((f) => !/\.(png|jpg|tgz|wasm)$/.test(f) && f !== 'package-lock.json')
      .filter((f) => outside.test(readFileSync(join(root, f), 'utf8')) && f !== 'test/docs.test.ts');
    expect(offenders).toEqual([]);
  });
});
