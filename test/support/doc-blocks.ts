/**
 * The configuration blocks a docs page shows, for tests that run them as they are shown. A block is
 * marked in its fence's info string: ```` ```nginx config=nginx-open ````. GitHub shows the first
 * word as the language and ignores the rest, so a reader sees an ordinary block.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

/** The text of the block marked `config=name` in `page` (a path from the project root). */
export function configBlock(page: string, name: string): string {
  const text = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');
  const blocks = [...text.matchAll(/^```[\w-]* config=([\w-]+)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === name);
  assert.equal(blocks.length, 1, `${page} has one block marked config=${name}`);
  return blocks[0]![2]!;
}

/**
 * `text` with each key of `replacements` replaced by its value, everywhere. Each key must occur:
 * a placeholder the page no longer shows would leave the test running something else than it
 * thinks.
 */
export function substitute(text: string, replacements: Readonly<Record<string, string>>): string {
  for (const [from, to] of Object.entries(replacements)) {
    assert.ok(text.includes(from), `the block shows ${from}`);
    text = text.split(from).join(to);
  }
  return text;
}

/** The `NAME=value` lines of an environment file (comments and blank lines skipped). */
export function environmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    assert.ok(m, `an environment line: ${line}`);
    env[m[1]!] = m[2]!;
  }
  return env;
}
