/**
 * Export and import over one `LinkStore` (docs/api.md, export and import; docs/analytics.md, moving
 * history): what the HTTP routes and the offline commands share, built once from the settings.
 */
import { createDomains, type Domain, type Domains } from '../links/domains.ts';
import { exportText, type ExportFormat } from './export.ts';
import { importLinks, type ImportDeps, type ImportResult } from './import.ts';
import type { ImportFormat } from './sources.ts';
import { importVisits, visitExportText, type VisitExportFilter } from './visit-transfer.ts';

/** What export and import need of the instance: its store, its URL and code rules, its clock and codes. */
export type TransferOptions = ImportDeps;

export interface Transfer {
  /**
   * Every live record (that `author` made, when given; of `domain`, when given) as text pieces,
   * oldest first; `return()` it when stopping early.
   */
  exportText(format: ExportFormat, author?: string, domain?: Domain): AsyncGenerator<string>;
  /** The rows from line `fromLine` on (default 1: all). */
  importLinks(body: AsyncIterable<Buffer | string>, format: ImportFormat, fromLine?: number): Promise<ImportResult>;
  /** Every event of the live links (of `domain`, when given) that passes `filter`, oldest first, as text pieces; `return()` it when stopping early. */
  exportVisits(format: ExportFormat, filter: VisitExportFilter, domain?: Domain): AsyncGenerator<string>;
  /** The events of a visits export, from line `fromLine` on (default 1: all). */
  importVisits(body: AsyncIterable<Buffer | string>, format: ImportFormat, fromLine?: number): Promise<ImportResult>;
  /** Milliseconds since the epoch (the export's file name). */
  now(): number;
}

export function createTransfer(options: TransferOptions): Transfer {
  const { store, rules, now } = options;
  const domains = rules.domains ?? createDomains(rules.baseUrl);
  return {
    exportText: (format, author, domain) => exportText(onDomain(store.exportAll(Math.floor(now() / 1000), author), domain, domains), format, domains),
    importLinks: (body, format, fromLine) => importLinks(body, format, options, fromLine),
    exportVisits: (format, filter, domain) => visitExportText(onDomain(store.exportVisits(filter, Math.floor(now() / 1000)), domain, domains), format),
    importVisits: (body, format, fromLine) => importVisits(body, format, options, fromLine),
    now,
  };
}

/**
 * The items of `items` (records or events, each named by its store key) on `domain`; all of them
 * when absent. A key for one domain exports that domain's (docs/security.md).
 */
async function* onDomain<T extends { readonly code: string }>(items: AsyncIterable<T>, domain: Domain | undefined, domains: Domains): AsyncGenerator<T> {
  if (domain === undefined) return yield* items;
  for await (const item of items) if (domains.domainOf(item.code) === domain) yield item;
}
