/**
 * The links import (docs/api.md, export and import): rows checked like creates (`row.ts`) and
 * stored in file order through the one import pipeline (`pipeline.ts`: the window of writes, the
 * chain that stops at a failure, the slices of work, the report by line). Shared by
 * `POST /api/import` and the offline `url-shortener import` command.
 */
import { candidateCodes } from '../links/codes.ts';
import { createDomains, type Domain } from '../links/domains.ts';
import type { Field } from './columns.ts';
import type { LinkRecord, LinkStore } from '../store/link-store.ts';
import { runImport, type ImportResult, type ImportRun, type ImportSteps } from './pipeline.ts';
import { checkRow, type CheckedRow, type RowRules } from './row.ts';
import { LINK_ROWS, type ImportFormat } from './sources.ts';

export { ErrorList, MAX_REPORTED_ERRORS, type ImportFailure, type ImportReport, type ImportResult, type RowError } from './pipeline.ts';

export interface ImportDeps {
  store: LinkStore;
  rules: RowRules;
  /** Milliseconds since the epoch. */
  now: () => number;
  randomCode: (length: number) => string;
}

/**
 * `from_line` (`--from-line`) as given: the line to resume from, an integer of 1 or more; undefined
 * when it is not one.
 */
export function parseFromLine(text: string): number | undefined {
  if (!/^[1-9]\d{0,14}$/.test(text)) return undefined;
  return Number(text);
}

const TAKEN = 'code already in use';

type LinkRow = Extract<CheckedRow, { ok: true }>;

/** The links' steps of the pipeline: a row checked like a create, stored under its code or a generated one. */
function linkSteps({ store, rules, randomCode }: ImportDeps): ImportSteps<Field, LinkRow> {
  // A row's code on its domain is the store's key (`domains.ts`).
  const { key } = rules.domains ?? createDomains(rules.baseUrl);
  /** Offers generated codes until the store takes one (or takes it in), or reports the code space exhausted. */
  function placeGenerated(record: Omit<LinkRecord, 'code'>, domain: Domain, line: number, run: ImportRun): void {
    for (const code of candidateCodes(randomCode, rules.minShortLength, rules.maxShortLength, rules.reserved)) {
      const taken = store.insert({ ...record, code: key(code, domain) }, run.now, run.chain);
      if (taken === false) continue;
      if (taken === true) return run.imported();
      // Only a store answering with promises refuses a generated code this late (a database, where
      // another instance took it meanwhile): this one row then lands after those written since.
      return run.later(line, taken, (stored) => (stored ? run.imported() : placeGenerated(record, domain, line, run)));
    }
    run.refused(line, `no free short code up to ${rules.maxShortLength} characters; raise MAX_SHORT_LENGTH`);
  }

  return {
    rows: LINK_ROWS,
    check: (values, now, textual) => checkRow(values, rules, now, textual),
    write(row, line, run) {
      if (row.code === undefined) return placeGenerated(row.record, row.domain, line, run);
      const taken = store.insert({ ...row.record, code: key(row.code, row.domain) }, run.now, run.chain);
      if (taken === false) run.refused(line, TAKEN);
      else if (taken === true) run.imported();
      else run.later(line, taken, (stored) => (stored ? run.imported() : run.refused(line, TAKEN)));
    },
  };
}

/**
 * Imports the rows of `body` that start on line `fromLine` or later (those before it are read but
 * neither checked nor reported: an import resumed after a failure). Resolves once every stored row
 * is durable; a failure of the store stops it, naming the first row not stored (`pipeline.ts`).
 */
export function importLinks(body: AsyncIterable<Buffer | string>, format: ImportFormat, deps: ImportDeps, fromLine = 1): Promise<ImportResult> {
  return runImport(body, format, linkSteps(deps), deps.now(), fromLine);
}
