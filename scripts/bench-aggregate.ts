/**
 * How fast the stats count packed events (src/visits/aggregate.ts): 1M events of one link and 10M
 * events over 100k links, in 30 daily buckets (UTC, and Europe/Berlin, whose days straddle two UTC
 * days), every top list, visitors drawn from a pool per day. Not a test: it prints events/s.
 *
 *   node --import ./scripts/ts-loader.mjs scripts/bench-aggregate.ts
 */
import { StatsAccumulator } from '../src/visits/aggregate.ts';
import { TopLinks } from '../src/visits/top-lists.ts';
import { BOT, HAS_VISITOR, STRIDE } from '../src/visits/packed.ts';
import { parseStatsRange, RangeRefusal } from '../src/visits/range.ts';

const TO = Date.UTC(2026, 5, 1) / 1000;
const FROM = TO - 30 * 86_400;

/** A seeded generator, so every run counts the same events. */
function xorshift(seed: number): () => number {
  let x = seed | 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** `links` runs of events in time order, `perLink` each, visitors from `pool` ids a day. */
function events(links: number, perLink: number, pool: number): Uint32Array {
  const next = xorshift(42);
  const data = new Uint32Array(links * perLink * STRIDE);
  for (let link = 0; link < links; link++) {
    let time = FROM + (next() % 3600);
    const step = Math.max(1, Math.floor((30 * 86_400) / perLink));
    for (let i = 0; i < perLink; i++) {
      const at = (link * perLink + i) * STRIDE;
      time += next() % (2 * step);
      data[at] = Math.min(time, TO - 1);
      data[at + 1] = next() % pool;
      data[at + 2] = next() % 8 === 0 ? 0 : 1 + (next() % 2000);
      const r = next();
      data[at + 3] =
        (1 + (r % 676)) |
        ((1 + ((r >>> 10) % 7)) << 10) |
        ((1 + ((r >>> 13) % 7)) << 13) |
        ((1 + ((r >>> 16) % 4)) << 16) |
        (r % 10 === 0 ? BOT : 0) |
        (r % 17 === 0 ? 0 : HAS_VISITOR);
    }
  }
  return data;
}

function run(label: string, data: Uint32Array, links: number, perLink: number, tz: string): void {
  const range = parseStatsRange({ from: FROM, to: TO - 1, interval: 'day', tz }, TO);
  if (range instanceof RangeRefusal) throw new Error(range.detail);
  const referrer = (i: number) => `host-${i}.example`;
  const times: number[] = [];
  const cpu: number[] = [];
  for (let round = 0; round < 5; round++) {
    const used = process.cpuUsage();
    const start = performance.now();
    const acc = new StatsAccumulator(range, referrer);
    // As the log store's stats of every link: each link's visits offered to the top 10, its code made only if it may enter.
    const top = new TopLinks();
    for (let link = 0; link < links; link++) {
      const visits = acc.add(data, link * perLink, (link + 1) * perLink);
      if (links > 1 && visits > 0 && top.admits(visits)) top.add(`c${link}`, visits);
    }
    acc.result(0, 0);
    top.list();
    times.push(performance.now() - start);
    cpu.push(process.cpuUsage(used).user / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const ms = times[2]!;
  const n = links * perLink;
  // CPU time too: on a busy machine the wall clock says more about the neighbours than the code.
  console.log(
    `${label.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms (cpu ${cpu[2]!.toFixed(0).padStart(5)} ms)  ${(((n / ms) * 1000) / 1e6).toFixed(1).padStart(6)} M events/s, median of 5`,
  );
}

const oneLink = events(1, 1_000_000, 50_000);
run('1M events, 1 link, UTC days', oneLink, 1, 1_000_000, 'UTC');
run('1M events, 1 link, Berlin days', oneLink, 1, 1_000_000, 'Europe/Berlin');
const many = events(100_000, 100, 1_000_000);
run('10M events, 100k links, UTC days', many, 100_000, 100, 'UTC');
run('10M events, 100k links, Berlin days', many, 100_000, 100, 'Europe/Berlin');
const distinct = events(100_000, 100, 0xffff_ffff);
run('10M events, 100k links, every visitor new', distinct, 100_000, 100, 'UTC');
