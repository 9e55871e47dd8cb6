/**
 * The shell blocks of the docs that a test runs (```` ```sh runnable ````): how a block is read
 * into commands and the output each shows, and how what a command printed is compared with it.
 * Pure functions; test/published/runnable-docs.test.ts runs the blocks against a real server.
 *
 * The conventions a runnable block follows, so a reader can copy it whole:
 * - A line not starting with `#` is a command (a trailing `\` continues it on the next line).
 * - The `# ` lines right under a command are what it prints, line by line; `# …` stands for any
 *   number of lines. A command with no such lines prints nothing.
 * - `http://localhost:3000` is the server's address, whatever port the test gives it.
 * - A code of letters and digits mixed after that address in a shown output (`4kZt9q`) stands for
 *   the code the server generated; later commands and outputs use the generated one in its place.
 */

export interface Command {
  /** The command as shown, continuation lines included. */
  text: string;
  /** The output shown under it, `…` for any lines. */
  shown: string[];
  /** The line of the page the command starts on (1-based). */
  line: number;
}

export interface Block {
  page: string;
  line: number;
  commands: Command[];
}

/** The doc's address of the server, replaced by the test's. */
export const DOC_ORIGIN = 'http://localhost:3000';

/** Any number of lines in a shown output. */
export const ELLIPSIS = '…';

/** Every ```` ```sh runnable ```` block of a page, as commands with their shown output. */
export function runnableBlocks(page: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```sh runnable\s*$/.test(lines[i]!)) continue;
    const start = i;
    const body: { text: string; line: number }[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push({ text: lines[i]!, line: i + 1 });
    blocks.push({ page, line: start + 1, commands: commandsOf(body) });
  }
  return blocks;
}

function commandsOf(body: { text: string; line: number }[]): Command[] {
  const commands: Command[] = [];
  let current: Command | undefined;
  let continued = false;
  for (const { text, line } of body) {
    if (continued && current) {
      current.text += `\n${text}`;
      continued = text.endsWith('\\');
      continue;
    }
    if (text.trim() === '') {
      current = undefined;
      continue;
    }
    if (text.startsWith('#')) {
      // A comment under a command is its output; anywhere else it is a comment.
      if (current) current.shown.push(text === '#' ? '' : text.replace(/^# /, ''));
      continue;
    }
    current = { text, shown: [], line };
    commands.push(current);
    continued = text.endsWith('\\');
  }
  return commands;
}

/** A shown code: letters and digits mixed, as generated codes are and route names are not. */
const SHOWN_CODE = /^(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{4,12}$/;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `text` with every shown code already bound replaced by the server's. */
export function substitute(text: string, bound: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [shown, actual] of bound) out = out.replace(new RegExp(`\\b${escapeRegExp(shown)}\\b`, 'g'), actual);
  return out;
}

/**
 * One shown line as a pattern over a printed one, `origin` standing for the doc's address: a
 * shown code after the address is a capture unless already bound.
 */
function linePattern(shown: string, origin: string, bound: ReadonlyMap<string, string>): { re: RegExp; names: string[] } {
  const names: string[] = [];
  const text = substitute(shown, bound).replaceAll(DOC_ORIGIN, origin);
  const parts = text.split(new RegExp(`(${escapeRegExp(origin)}/[A-Za-z0-9]+\\b)`));
  const source = parts
    .map((part, i) => {
      if (i % 2 === 0) return escapeRegExp(part);
      const code = part.slice(origin.length + 1);
      if (!SHOWN_CODE.test(code) || bound.has(code)) return escapeRegExp(part);
      names.push(code);
      return `${escapeRegExp(origin)}/([A-Za-z0-9_-]+)`;
    })
    .join('');
  return { re: new RegExp(`^${source}$`), names };
}

/**
 * Whether `printed` (the command's output lines) is what `shown` shows; on success the codes it
 * bound are added to `bound`. On failure, the first shown line that found no match.
 */
export function matchOutput(
  shown: readonly string[],
  printed: readonly string[],
  origin: string,
  bound: Map<string, string>,
): { ok: true } | { ok: false; expected: string } {
  const attempt = (s: number, p: number, binds: Map<string, string>): Map<string, string> | undefined => {
    if (s === shown.length) return p === printed.length ? binds : undefined;
    if (shown[s] === ELLIPSIS) {
      for (let q = p; q <= printed.length; q++) {
        const done = attempt(s + 1, q, binds);
        if (done) return done;
      }
      return undefined;
    }
    if (p === printed.length) return undefined;
    const { re, names } = linePattern(shown[s]!, origin, binds);
    const m = re.exec(printed[p]!);
    if (!m) return undefined;
    const next = new Map(binds);
    names.forEach((name, i) => {
      next.set(name, m[i + 1]!);
    });
    return attempt(s + 1, p + 1, next);
  };
  const result = attempt(0, 0, bound);
  if (result) {
    for (const [k, v] of result) bound.set(k, v);
    return { ok: true };
  }
  const firstMissing = shown.find((line) => line !== ELLIPSIS) ?? '(nothing)';
  return { ok: false, expected: firstMissing };
}
