/**
 * The Prometheus text exposition format 0.0.4, as a pure function of plain data. A metric family
 * is numbers, strings and arrays only: the families of several processes can cross an IPC channel
 * and be added up before one `renderPrometheus` (`merge.ts`: the sum over the workers of `WORKERS=N`, docs/scale-out.md).
 */

export const PROMETHEUS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Label names and values, in the order they are written. */
export type Labels = readonly (readonly [name: string, value: string])[];

export interface Sample {
  labels: Labels;
  value: number;
}

export interface HistogramSample {
  labels: Labels;
  /** Observations per bucket, not cumulative: `counts[i]` fell in (bounds[i-1], bounds[i]]; the last one above every bound. */
  counts: readonly number[];
  sum: number;
}

export type Family =
  | { name: string; help: string; type: 'counter' | 'gauge'; samples: readonly Sample[] }
  | { name: string; help: string; type: 'histogram'; bounds: readonly number[]; samples: readonly HistogramSample[] };

/** A label value inside double quotes: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** HELP text: backslash and line feed are escaped (a double quote is not, there). */
export function escapeHelp(help: string): string {
  return help.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value as the format spells it (Go's ParseFloat reads it back). */
export function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function labelText(labels: Labels): string {
  return labels.length === 0 ? '' : `{${labels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`;
}

export function renderPrometheus(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const family of families) {
    const { name } = family;
    lines.push(`# HELP ${name} ${escapeHelp(family.help)}`, `# TYPE ${name} ${family.type}`);
    if (family.type !== 'histogram') {
      for (const s of family.samples) lines.push(`${name}${labelText(s.labels)} ${formatValue(s.value)}`);
      continue;
    }
    for (const s of family.samples) {
      // Buckets are cumulative on the wire: each counts every observation at or below its bound.
      let total = 0;
      family.bounds.forEach((bound, i) => {
        total += s.counts[i] ?? 0;
        lines.push(`${name}_bucket${labelText([...s.labels, ['le', formatValue(bound)]])} ${formatValue(total)}`);
      });
      total += s.counts[family.bounds.length] ?? 0;
      lines.push(
        `${name}_bucket${labelText([...s.labels, ['le', '+Inf']])} ${formatValue(total)}`,
        `${name}_sum${labelText(s.labels)} ${formatValue(s.sum)}`,
        `${name}_count${labelText(s.labels)} ${formatValue(total)}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
