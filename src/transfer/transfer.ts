/**
 * Export and import over one `LinkStore` (docs/api.md, export and import): what the HTTP routes
 * and the offline commands share, built once from the settings.
 */
import type { LinkStore } from '../store/link-store.ts';
import { exportText, type ExportFormat } from './export.ts';
import { importLinks, type ImportResult } from './import.ts';
import type { RowRules } from './row.ts';
import type { ImportFormat } from './sources.ts';

export interface TransferOptions {
  store: LinkStore;
  /** URL and code rules of the instance (imported rows are checked like creates). */
  rules: RowRules;
  /** Milliseconds since the epoch. */
  now: () => number;
  randomCode: (length: number) => string;
}

export interface Transfer {
  /** Every live record as text pieces, oldest first; `return()` it when stopping early. */
  exportText(format: ExportFormat): AsyncGenerator<string>;
  importLinks(body: AsyncIterable<Buffer | string>, format: ImportFormat): Promise<ImportResult>;
  /** Milliseconds since the epoch (the export's file name). */
  now(): number;
}

export function createTransfer(options: TransferOptions): Transfer {
  const { store, rules, now, randomCode } = options;
  return {
    exportText: (format) => exportText(store.exportAll(Math.floor(now() / 1000)), format, rules.baseUrl),
    importLinks: (body, format) => importLinks(body, format, { store, rules, now, randomCode }),
    now,
  };
}
