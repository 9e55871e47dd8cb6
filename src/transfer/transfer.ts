/**
 * Export and import over one `LinkStore` (docs/api.md, export and import): what the HTTP routes
 * and the offline commands share, built once from the settings.
 */
import { exportText, type ExportFormat } from './export.ts';
import { importLinks, type ImportDeps, type ImportResult } from './import.ts';
import type { ImportFormat } from './sources.ts';

/** What export and import need of the instance: its store, its URL and code rules, its clock and codes. */
export type TransferOptions = ImportDeps;

export interface Transfer {
  /** Every live record as text pieces, oldest first; `return()` it when stopping early. */
  exportText(format: ExportFormat): AsyncGenerator<string>;
  /** The rows from line `fromLine` on (default 1: all). */
  importLinks(body: AsyncIterable<Buffer | string>, format: ImportFormat, fromLine?: number): Promise<ImportResult>;
  /** Milliseconds since the epoch (the export's file name). */
  now(): number;
}

export function createTransfer(options: TransferOptions): Transfer {
  const { store, rules, now } = options;
  return {
    exportText: (format) => exportText(store.exportAll(Math.floor(now() / 1000)), format, rules.baseUrl),
    importLinks: (body, format, fromLine) => importLinks(body, format, options, fromLine),
    now,
  };
}
