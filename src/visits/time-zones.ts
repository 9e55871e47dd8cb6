/**
 * Time zones as the stats' ranges read them (docs/analytics.md, ranges and buckets): a zone's wall
 * clock, and the instants a wall time names in it (none in a spring gap, two in an autumn overlap),
 * from the runtime's IANA database (`Intl.DateTimeFormat`), with no table of rules of our own.
 */

/**
 * A zone's wall clock. `wall(t)` is the local time of instant `t` written as if it were UTC (both in
 * Unix seconds); `instants(w)` the instants whose wall clock reads `w`: none in a spring gap, two in
 * an autumn overlap.
 */
export interface Zone {
  readonly name: string;
  wall(t: number): number;
  instants(w: number): number[];
  /** The instant of wall time `w`: the earlier of two, and in a gap the time as if the clock had not jumped. */
  instant(w: number): number;
  /** The first instant whose wall clock reads `w` or later: in a gap, the moment the clock jumped. */
  firstFrom(w: number): number;
}

export const UTC_ZONE: Zone = { name: 'UTC', wall: (t) => t, instants: (w) => [w], instant: (w) => w, firstFrom: (w) => w };

// A zone is a formatter and costs a few microseconds a call; the formatters of the zones asked for
// lately are kept, so a dashboard that asks every minute builds none.
const ZONES = new Map<string, Zone>();
const MAX_ZONES = 64;

/** The zone of IANA name `name` (or `UTC`); undefined when there is no such zone. */
export function zoneOf(name: string): Zone | undefined {
  if (name === 'UTC') return UTC_ZONE;
  // Newer runtimes also take offsets such as +01:00, which have no DST and are no IANA name.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return undefined;
  const known = ZONES.get(name);
  if (known !== undefined) return known;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return undefined;
  }
  if (ZONES.size >= MAX_ZONES) ZONES.clear();
  const zone = intlZone(name, format);
  ZONES.set(name, zone);
  return zone;
}

const FORMATTED = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/;

function intlZone(name: string, format: Intl.DateTimeFormat): Zone {
  const wall = (t: number): number => {
    const m = FORMATTED.exec(format.format(t * 1000))!;
    return Date.UTC(Number(m[3]), Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5]), Number(m[6])) / 1000;
  };
  const offset = (t: number): number => wall(t) - t;
  // Offsets change at most once around a given moment in practice, so the offsets a day either side
  // are the only candidates: the instant is the wall time minus one of them, if that one holds there.
  const instants = (w: number): number[] => {
    const before = offset(w - 86_400);
    const after = offset(w + 86_400);
    const found: number[] = [];
    for (const o of before === after ? [before] : [before, after]) if (offset(w - o) === o) found.push(w - o);
    return found.sort((a, b) => a - b);
  };
  const instant = (w: number): number => instants(w)[0] ?? w - offset(w - 86_400);
  const firstFrom = (w: number): number => {
    const found = instants(w)[0];
    if (found !== undefined) return found;
    // In a gap: the wall clock is below w at w minus the later offset and past it at w minus the
    // earlier one; the jump is between, found by halving.
    let below = w - offset(w + 86_400);
    let from = w - offset(w - 86_400);
    while (from - below > 1) {
      const mid = Math.floor((below + from) / 2);
      if (wall(mid) >= w) from = mid;
      else below = mid;
    }
    return from;
  };
  return { name, wall, instants, instant, firstFrom };
}
