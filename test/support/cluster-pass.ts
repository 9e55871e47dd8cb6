/**
 * `npm run test:cluster`: HTTP tests against three instances over one PostgreSQL database
 * (`cluster.ts`). Without PostgreSQL the whole pass is skipped with a loud message on a developer
 * machine; under CI it fails instead (`missing-tool.ts`).
 *
 * The rule that picks the files (`PICKED`): a file runs on the cluster when its outcome can differ
 * there, that is when what it checks is kept in the database or decided between instances —
 * requests racing on one link (creates of one code, deletes, edits, visits under a limit), counts
 * and events (the analytics invariant), imports and exports, lists and searches the database
 * answers, text the database must hold, clocks pushed to every instance, and each door's contract
 * over that shared state (REST, MCP, Shlink's, YOURLS'). A file about one process — its framing,
 * headers, gate, routing, logs, metrics, docs, input refused before any store is asked — gives the
 * same answer on every instance, and runs on one process only. `npm run test:cluster:all`
 * (`--all`, or `TEST_CLUSTER=all` in `npm test`) runs every HTTP test file on the cluster.
 */
import { readdirSync } from 'node:fs';
import { runBundled } from './bundle-tests.ts';
import { missingTool, UNDER_CI } from './missing-tool.ts';
import { findPgBin, withSharedPgServer } from './pg.ts';

/** Every test of the HTTP contract: the folders that start a service, and the HTTP transfer tests. */
const ALL = [
  'test/api/*.test.ts',
  'test/app/*.test.ts',
  'test/http/*.test.ts',
  'test/mcp/*.test.ts',
  'test/metrics/*.test.ts',
  'test/published/*.test.ts',
  'test/peers/*.test.ts',
  'test/qr/qr-route.test.ts',
  'test/transfer/http-*.test.ts',
  'test/transfer/round-trip.test.ts',
];

/** The files whose outcome can differ on several instances, each with what makes it so. */
const PICKED: readonly [file: string, why: string][] = [
  ['test/api/custom-codes.test.ts', 'one winner among concurrent creates of a code'],
  ['test/api/delete-race.test.ts', 'one winner among concurrent deletes'],
  ['test/api/domains.test.ts', "links of several domains the database holds, each domain's own redirects"],
  ['test/api/edit.test.ts', 'edits kept in the database, raced with visits'],
  ['test/api/edit-retention-null.test.ts', 'an edit kept in the database'],
  ['test/api/expiry.test.ts', 'the clock pushed to every instance'],
  ['test/api/labels.test.ts', 'titles and tags the database holds and filters'],
  ['test/api/link-previews.test.ts', 'visit limits'],
  ['test/api/list-paging.test.ts', 'pages the database answers'],
  ['test/api/list-search.test.ts', 'searches the database answers'],
  ['test/api/list-stream.test.ts', 'a list read while deletes go on elsewhere'],
  ['test/api/routes.test.ts', 'the core routes over shared links'],
  ['test/api/routing.test.ts', "a link's routing the database holds, edits of its parts merged there, the rule of each event"],
  ['test/api/tag-nfc.test.ts', 'tags the database holds and filters'],
  ['test/api/unstorable-text.test.ts', 'text the database must hold'],
  ['test/api/visit-events.test.ts', 'events and counts: the invariant'],
  ['test/api/visit-limits.test.ts', 'visit limits exact across instances'],
  ['test/api/visit-stats.test.ts', 'stats over events the database holds'],
  ['test/mcp/mcp-domains.test.ts', "MCP's door over links of several domains"],
  ['test/mcp/mcp-labels.test.ts', "MCP's door over shared links"],
  ['test/mcp/mcp-sdk.test.ts', "MCP's door over shared links"],
  ['test/mcp/mcp-stats.test.ts', "MCP's door over shared events"],
  ['test/mcp/mcp-routing.test.ts', "MCP's door over shared routing"],
  ['test/peers/shlink.test.ts', "Shlink's door over shared links"],
  ['test/peers/shlink-domains.test.ts', "Shlink's door over links of several domains"],
  ['test/peers/shlink-rules.test.ts', "Shlink's door over shared routing"],
  ['test/peers/shlink-unstorable-text.test.ts', 'text the database must hold, through Shlink'],
  ['test/peers/yourls-actions.test.ts', "YOURLS' door over shared links"],
  ['test/peers/yourls-domains.test.ts', "YOURLS' door over links of several domains"],
  ['test/peers/yourls-stats.test.ts', "YOURLS' door over shared counts"],
  ['test/transfer/http-csv-formulas.test.ts', 'imports'],
  ['test/transfer/http-domains.test.ts', 'imports and exports of several domains'],
  ['test/transfer/http-export.test.ts', 'exports'],
  ['test/transfer/http-import.test.ts', 'imports'],
  ['test/transfer/http-visits-export.test.ts', 'exports of events'],
  ['test/transfer/http-visits-import.test.ts', 'imports of events'],
  ['test/transfer/round-trip.test.ts', 'exports imported again'],
  ['test/transfer/routing.test.ts', 'routing exported and imported again'],
];

const FILES = process.argv.includes('--all') || process.env['TEST_CLUSTER'] === 'all' ? ALL : PICKED.map(([file]) => file);

if (!findPgBin()) {
  const message = 'PostgreSQL not found (apt-get install postgresql, or set PG_BIN): the cluster pass of the HTTP tests cannot run';
  // Not a test: the failure under CI is this process's exit code.
  if (UNDER_CI) {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
  missingTool('THE CLUSTER PASS', message);
  process.exit(0);
}

/** The files a pattern of `ALL` names: a file, or a folder's files whose names are the text around one `*`. */
function expand(pattern: string): string[] {
  const star = pattern.indexOf('*');
  if (star === -1) return [pattern];
  const slash = pattern.lastIndexOf('/');
  const [before, after] = [pattern.slice(slash + 1, star), pattern.slice(star + 1)];
  const dir = pattern.slice(0, slash);
  return readdirSync(dir)
    .filter((file) => file.startsWith(before) && file.endsWith(after))
    .sort()
    .map((file) => `${dir}/${file}`);
}

// Each run as its bundle (`bundle-tests.ts`), not through the TypeScript loader; the fleets of
// its processes, and the files that make databases, on one PostgreSQL server (`pg.ts`).
process.exit(await withSharedPgServer((pg) => runBundled('cluster', FILES.flatMap(expand), 2, { SHORTENER_TEST_TARGET: 'cluster', ...pg })));
