// Export and import (docs/ui.md, your links): every link downloaded as JSON Lines or CSV, a file of
// either read back, its report shown, and an import the store cut short resumed where it stopped.

import { api, problem } from './api.js';
import { $, el, pending, saveDownload, showError } from './dom.js';
import { showFirstPage } from './links.js';

/**
 * Where an import the store cut short (503) goes on: the file it was, and the line of its first row
 * not stored. Importing that same file again resumes there (`from_line`), so rows without a code
 * are not stored twice; another file starts from its first line.
 */
let resumable = null;
const sameFile = (a, b) => a.name === b.name && a.size === b.size && a.lastModified === b.lastModified;

function exportAs(format, trigger) {
  showError($('export-error'), '');
  void pending(trigger, async () => {
    try {
      const res = await api(`api/export?format=${format}`, { admin: true });
      if (!res.ok) throw new Error((await problem(res)).message);
      await saveDownload(res, `urls.${format}`);
    } catch (err) {
      showError($('export-error'), err.message);
    }
  });
}

function importFile(event) {
  event.preventDefault();
  showError($('import-error'), '');
  const file = $('import-file').files?.[0];
  if (!file) return showError($('import-error'), 'Choose a file to import.');
  const csv = /\.csv$/i.test(file.name) || file.type === 'text/csv';
  const from = resumable && sameFile(resumable.file, file) ? resumable.line : undefined;
  void pending($('import-button'), async () => {
    try {
      const path = from === undefined ? 'api/import' : `api/import?from_line=${from}`;
      const res = await api(path, { method: 'POST', admin: true, headers: { 'Content-Type': csv ? 'text/csv' : 'application/x-ndjson' }, body: file });
      if (res.status === 503) {
        const report = await res.json();
        resumable = { file, line: report.line };
        throw new Error(
          `${report.detail ?? 'The service cannot store links right now.'} The rows before line ${report.line} are stored (${report.imported} imported). Import the same file again to go on from line ${report.line}.`,
        );
      }
      if (!res.ok) throw new Error((await problem(res)).message);
      resumable = null;
      showReport(await res.json());
      await showFirstPage();
    } catch (err) {
      showError($('import-error'), err.message);
    }
  });
}

function showReport({ imported, skipped, errors }) {
  const box = $('import-report');
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lines = errors.map((e) => el('li', { textContent: `Line ${e.line}: ${e.detail}` }));
  box.replaceChildren(el('p', { textContent: `Imported ${plural(imported, 'link')}, skipped ${plural(skipped, 'row')}.` }));
  if (lines.length > 0) box.append(el('ul', {}, ...lines));
  if (skipped > errors.length) box.append(el('p', { className: 'hint', textContent: `The first ${errors.length} reasons are shown.` }));
  box.hidden = false;
}

export function startTransfer() {
  for (const format of ['jsonl', 'csv']) {
    const trigger = $(`export-${format}`);
    trigger.addEventListener('click', () => exportAs(format, trigger));
  }
  $('import-form').addEventListener('submit', importFile);
}
