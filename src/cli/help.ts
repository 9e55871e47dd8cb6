/** `--help`, computed from the settings table. */
import type { AnySetting } from '../config/config.ts';
import { envName, TABLE } from '../config/settings.ts';

/** A default as `--help` shows it. */
function shown(s: AnySetting): string {
  if (s.shownDefault !== undefined) return s.shownDefault;
  const value = s.default;
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : value.join(',');
  return value === '' ? 'empty' : String(value);
}

/** `--help`: every setting from the table, with its variable, its default and what it accepts. */
export function helpText(): string {
  const settings = TABLE.flatMap((s) => [
    `  ${`${s.flag} ${s.boolean ? '[BOOL]' : 'VALUE'}`.padEnd(34)} ${s.env}`,
    `      ${s.help}`,
    `      default: ${shown(s)}; allowed: ${s.parse.accepts}${s.relation === undefined ? '' : `, ${s.relation.must} ${envName(s.relation.other)}`}`,
  ]);
  const other = (flag: string, what: string): string => `  ${flag.padEnd(34)} ${what}`;
  // The spelling that works in a clone after `npm install`: the bare command exists only once the
  // package is linked or installed globally, and `npm run cli` prints npm's own lines into stdout.
  return [
    'Usage: node dist/server.js [options]',
    '       node dist/server.js export [--format jsonl|csv] [options] > FILE',
    '       node dist/server.js import FILE [--format jsonl|csv] [--from-line L] [options]',
    '       node dist/server.js export-visits [--format jsonl|csv] [--code C] [--from T] [--to T] [--bots include|exclude|only] [options] > FILE',
    '       node dist/server.js import-visits FILE|- [--format jsonl|csv] [--from-line L] [options]',
    '       node dist/server.js keys create --name NAME --role creator|viewer|editor|admin [--expires-at T] [options]',
    '       node dist/server.js keys list [options]',
    '       node dist/server.js keys revoke ID [options]',
    '       node dist/server.js webhooks create --url URL --events TYPE[,TYPE...] [--domain HOST] [options]',
    '       node dist/server.js webhooks list [options]',
    '       node dist/server.js webhooks delete ID [options]',
    '       node dist/server.js webhooks deliveries ID [options]',
    '',
    'Run from the package folder. After `npm link --ignore-scripts` there (or a global install) the same command is url-shortener.',
    '',
    'Every option also reads the environment variable named beside it; a JSON file given with',
    '--config may use the snake_case names. Precedence: option > environment > file > default.',
    '',
    ...settings,
    '',
    other('--config FILE', 'JSON settings file'),
    other('--repair', 'keep every intact entry of a damaged log, move the damaged file aside, report, exit'),
    other('--compact', 'rewrite the log to one entry per live link, report, exit'),
    other('--help, --version', 'print this, or the version, and exit'),
  ].join('\n');
}
