/**
 * The mutants of `npm run mutate` (scripts/mutate.ts): one-line bugs that the tests named beside
 * each must catch. Each is a rule the service promises, or a bug a test once let through; when a
 * bug is fixed, its mutant joins the table (docs/architecture.md, "Mutants").
 */

export interface Mutant {
  /** Short, unique: what the mutant breaks (`npm run mutate -- <name>…` runs a few). */
  name: string;
  /** The source file, from the repository's root. */
  file: string;
  /** Text that occurs exactly once in `file`, else the table is stale. */
  from: string;
  /** What it becomes. */
  to: string;
  /** Test files that must not all pass with the mutant in place. */
  tests: string[];
}

export const MUTANTS: readonly Mutant[] = [
  // The core rules.
  {
    name: 'bearer-exact',
    file: 'src/http/gate.ts',
    from: 'return matchesSecret(values[0]!, expected)',
    to: 'return matchesSecret(values[0]!.trim(), expected)',
    tests: ['test/http/gate.test.ts'],
  },
  {
    name: 'tries-per-length',
    file: 'src/links/codes.ts',
    from: 'export const TRIES_PER_LENGTH = 10;',
    to: 'export const TRIES_PER_LENGTH = 9;',
    tests: ['test/links/codes.test.ts'],
  },
  {
    name: 'torn-tail',
    file: 'src/store/log/replay.ts',
    from: "const tornTail = this.carry ? { line: this.line + 1, reason: 'incomplete line (no newline)' } : undefined;",
    to: 'const tornTail = undefined;',
    tests: ['test/store/log/replay.test.ts'],
  },
  {
    name: 'visit-limit-exact',
    file: 'src/store/log/log-engine.ts',
    from: 'if (records.visits(s) >= records.maxVisits(s)) return false;',
    to: 'if (records.visits(s) > records.maxVisits(s)) return false;',
    tests: ['test/api/visit-limits.test.ts'],
  },
  {
    name: 'redirect-cache-control',
    file: 'src/http/respond.ts',
    from: "'Cache-Control', 'private, no-store', 'Content-Length', '0'",
    to: "'Cache-Control', 'no-store', 'Content-Length', '0'",
    tests: ['test/api/redirect-path.test.ts'],
  },
  {
    name: 'expiry-instant',
    file: 'src/store/link-store.ts',
    from: 'nowSeconds >= createdAt + retentionDays * DAY',
    to: 'nowSeconds > createdAt + retentionDays * DAY',
    tests: ['test/api/expiry.test.ts'],
  },
  {
    name: 'compaction-trigger',
    file: 'src/store/log/compactor.ts',
    from: 'writer.entries - live <= live) return;',
    to: 'writer.entries - live < live) return;',
    tests: ['test/store/log/compaction.test.ts'],
  },
  {
    name: 'fsync-before-answer',
    file: 'src/store/log/log-writer.ts',
    from: 'if (this.fsyncWrites) await this.fs.fsync(this.fd);',
    to: 'if (this.fsyncWrites) void this.fs.fsync(this.fd);',
    tests: ['test/store/log/store.test.ts'],
  },
  {
    name: 'one-delete-wins',
    file: 'src/store/log/log-engine.ts',
    from: 'if (!this.records.has(code) || this.deleting.has(code)) return false;',
    to: 'if (!this.records.has(code)) return false;',
    tests: ['test/api/delete-race.test.ts'],
  },
  {
    name: 'wrong-key-learns-nothing',
    file: 'src/api/admin-key.ts',
    from: "if (who.error === 'forbidden') throw new HttpError(403, who.detail, notice);",
    to: "if (who.error === 'forbidden') throw new HttpError(403, who.detail ?? 'invalid API key', notice);",
    tests: ['test/http/errors.test.ts'],
  },
  // Bugs the suite once let through (issue 36's audit).
  {
    name: 'malformed-json-as-empty',
    file: 'src/http/body.ts',
    from: 'if (!parsed.ok) throw jsonBodyError(parsed.fault);',
    to: 'if (!parsed.ok) return { get: () => undefined, all: () => undefined, textual: false };',
    tests: ['test/api/shorten-input.test.ts'],
  },
  {
    name: 'no-fast-path',
    file: 'src/dispatch.ts',
    from: 'const fastRedirects = deps.fastRedirects;',
    to: 'const fastRedirects = false;',
    tests: ['test/api/redirect-path.test.ts'],
  },
  {
    name: 'list-drops-at-piece-boundary',
    file: 'src/api/list-json.ts',
    from: '        yield piece;\n',
    to: "        yield piece.slice(0, piece.lastIndexOf(',{'));\n",
    tests: ['test/api/list-stream.test.ts'],
  },
  {
    name: 'export-ignores-backpressure',
    file: 'src/http/pacer.ts',
    from: 'if (sink.write(piece)) {',
    to: 'if (sink.write(piece) || true) {',
    tests: ['test/transfer/http-export.test.ts'],
  },
  // The visit classification (src/visits/): each rule the oracles or the tables pin.
  {
    name: 'programs-pass-as-browsers',
    file: 'src/visits/bots.ts',
    from: '  if (!BROWSER_START.test(ua)) return true;\n',
    to: '',
    tests: ['test/visits/user-agent-oracles.test.ts'],
  },
  {
    name: 'iphone-is-a-mac',
    file: 'src/visits/user-agent.ts',
    from: "  [/\\b(?:iPhone|iPad|iPod)\\b/, 'iOS'],\n",
    to: '',
    tests: ['test/visits/user-agent-oracles.test.ts'],
  },
  {
    name: 'user-agent-cache-unbounded',
    file: 'src/visits/recent-texts.ts',
    from: 'if (cache.size >= max)',
    to: 'if (cache.size > max)',
    tests: ['test/visits/user-agent-cache.test.ts', 'test/visits/referrer.test.ts'],
  },
  {
    name: 'in-app-browser-is-a-preview',
    file: 'src/visits/preview-fetchers.ts',
    from: "(f.at === 'start' ? '^' : '')",
    to: "''",
    tests: ['test/visits/preview-fetchers.test.ts'],
  },
  {
    name: 'forwarded-for-leftmost',
    file: 'src/visits/client-address.ts',
    from: 'let from = start + 1;',
    to: 'let from = 0;',
    tests: ['test/visits/client-address.test.ts'],
  },
  {
    name: 'staged-events-uncounted',
    file: 'src/store/log/link-events.ts',
    from: '  length(s: number): number {\n    this.settle();',
    to: '  length(s: number): number {',
    tests: ['test/store/log/link-events.test.ts'],
  },
  {
    name: 'visitor-key-outlives-its-day',
    file: 'src/visits/visitor-id.ts',
    from: 'current.day !== day',
    to: 'false',
    tests: ['test/visits/visitor-id.test.ts'],
  },
  // The start-up checkpoint a compaction writes.
  {
    name: 'checkpoint-keeps-replaced-twin',
    file: 'src/store/log/keydir.ts',
    from: 'for (const s of late) keydir.dropOlderTwin(s);',
    to: '',
    tests: ['test/store/log/compaction-checkpoint.test.ts'],
  },
  {
    name: 'checkpoint-covers-kept-aside-writes',
    file: 'src/store/log/compaction.ts',
    from: 'const covered = { offset: written.size, entries: written.lines };',
    to: 'const covered = { offset: written.size + 1, entries: written.lines };',
    tests: ['test/store/log/compaction-checkpoint.test.ts'],
  },
  {
    name: 'compaction-checkpoint-drops-labels',
    file: 'src/store/log/keydir-image.ts',
    from: 'if (labels !== undefined) sink.labels(labels);',
    to: 'if (labels !== undefined && nextSeqs) sink.labels(labels);',
    tests: ['test/store/log/checkpoint.test.ts'],
  },
  // A PostgreSQL transaction whose backend is terminated (begin.ts): the driver's throw ended the process.
  {
    name: 'pg-rollback-after-close',
    file: 'src/store/postgres/begin.ts',
    from: 'if (closed || closedBy(err)) return forsaken();',
    to: '',
    tests: ['test/store/postgres/terminated.test.ts'],
  },
  {
    name: 'pg-statement-after-close',
    file: 'src/store/postgres/begin.ts',
    from: 'if (closed()) throw refusal();',
    to: '',
    tests: ['test/store/postgres/terminated.test.ts'],
  },
];
