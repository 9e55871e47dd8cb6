/**
 * The command line of `url-shortener export`, `import FILE`, `export-visits` and `import-visits
 * FILE` (docs/operations.md, docs/analytics.md): the command, its file, its own options, and the
 * settings it passes on to be read as the server reads them. What each command does is
 * `transfer-commands.ts`.
 */
import { ConfigError } from '../errors.ts';
import type { ExportFormat } from '../transfer/export.ts';
import { parseFromLine } from '../transfer/import.ts';
import { parseVisitExportFilter, type VisitExportParams } from '../transfer/visit-transfer.ts';

export type TransferCommandName = 'export' | 'import' | 'export-visits' | 'import-visits';

export interface TransferCommand {
  command: TransferCommandName;
  /** The file to import (`-`: stdin, for `import-visits`). */
  file: string | undefined;
  format: ExportFormat | undefined;
  /** Given: a PostgreSQL store was asked for (like `DATABASE_URL`, which it overrides). */
  databaseUrl: string | undefined;
  /** `import --from-line L`: the rows from line L on (the resume of a failed import); 1 = all. */
  fromLine: number;
  /** The other arguments: settings, read as the server reads them. */
  settings: string[];
  /** `export-visits --code C --from F --to T --bots B`, as given (checked as they are parsed). */
  visits?: VisitExportParams;
}

const COMMANDS: ReadonlySet<string> = new Set(['export', 'import', 'export-visits', 'import-visits']);
/** The options of `export-visits` that filter its events, and the parameter each one is. */
const VISIT_FILTERS: Readonly<Record<string, keyof VisitExportParams>> = { '--code': 'code', '--from': 'from', '--to': 'to', '--bots': 'bots' };

/** `export …`, `import FILE …`, `export-visits …` or `import-visits FILE …`; undefined when argv is none of them. Throws `ConfigError`. */
export function parseTransferCommand(argv: readonly string[]): TransferCommand | undefined {
  const [first, ...rest] = argv;
  if (first === undefined || !COMMANDS.has(first)) return undefined;
  const command = first as TransferCommandName;
  const importing = command === 'import' || command === 'import-visits';
  const parsed: TransferCommand = { command, file: undefined, format: undefined, databaseUrl: undefined, fromLine: 1, settings: [] };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg;
    // An own key only: an argument `constructor` is no filter.
    const filter = command === 'export-visits' && Object.hasOwn(VISIT_FILTERS, name) ? VISIT_FILTERS[name] : undefined;
    if (name === '--format' || name === '--database-url' || (name === '--from-line' && importing) || filter !== undefined) {
      const value = eq !== -1 && arg.startsWith('--') ? arg.slice(eq + 1) : rest[++i];
      if (value === undefined) throw new ConfigError(`option ${name} needs a value`);
      if (filter !== undefined) parsed.visits = { ...parsed.visits, [filter]: value };
      else if (name === '--database-url') parsed.databaseUrl = value;
      else if (name === '--from-line') {
        const line = parseFromLine(value);
        if (line === undefined)
          throw new ConfigError(`invalid --from-line ${JSON.stringify(value)}: must be an integer of 1 or more (the line to resume the import from)`);
        parsed.fromLine = line;
      } else if (value === 'jsonl' || value === 'csv') parsed.format = value;
      else throw new ConfigError(`invalid --format ${JSON.stringify(value)}: must be jsonl or csv`);
    } else if ((!arg.startsWith('-') || (arg === '-' && command === 'import-visits')) && importing && parsed.file === undefined) {
      parsed.file = arg;
    } else {
      parsed.settings.push(arg);
      // A setting's value travels with it (`--data-dir D`); resolveConfig reads the pair.
      if (arg.startsWith('--') && eq === -1 && rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('--')) parsed.settings.push(rest[++i]!);
    }
  }
  if (importing && parsed.file === undefined) {
    throw new ConfigError(`${command} needs the file to read: node dist/server.js ${command} ${command === 'import' ? 'FILE' : 'FILE|-'} [--data-dir D]`);
  }
  if (command === 'export-visits') {
    // Checked here, before a store is opened: a bad --from is a usage error (exit 2).
    const filter = parseVisitExportFilter(parsed.visits ?? {});
    // The sentence starts with the parameter's name, which is the option's.
    if (typeof filter === 'string') throw new ConfigError(`invalid --${filter.split(' ')[0]}: ${filter}`);
  }
  return parsed;
}
