// How the stats' values read (docs/ui.md, stats): a bucket's name per interval, a country, a
// device, a count with its noun, a date in the stats' time zone.

/**
 * A bucket's name on the x axis, and in the table and under the pointer, per interval (the page never
 * asks for weeks). A month always carries its full year ("Oct 2026"): "Oct 26" reads as a day.
 */
export const BUCKET_NAMES = {
  hour: {
    unit: 'hour',
    axis: { hour: '2-digit', minute: '2-digit' },
    full: { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' },
  },
  day: { unit: 'day', axis: { day: 'numeric', month: 'short' }, full: { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' } },
  month: { unit: 'month', axis: { month: 'short', year: 'numeric' }, full: { month: 'long', year: 'numeric' } },
};

const regionNames = new Intl.DisplayNames(undefined, { type: 'region' });

export const deviceName = (device) => (device === null ? 'Unknown' : device.charAt(0).toUpperCase() + device.slice(1));

export function countryName(code) {
  if (code === null) return 'Unknown';
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}

export const plural = (n, one, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

export function dateFormat(tz, options) {
  return new Intl.DateTimeFormat(undefined, { ...options, timeZone: tz });
}
