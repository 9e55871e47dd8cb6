/**
 * A child process for the crash test of visit limits: opens the log store in a data dir and visits
 * one limited link from many concurrent loops, writing `found` on stdout for every visit granted
 * (only once its count is durable, as a redirect would be sent) and `done` once the limit answers.
 * The parent kills it with SIGKILL at a random moment.
 *
 *   node --import ./scripts/ts-loader.mjs test/support/limited-visits-child.ts <data dir> <code> <concurrency>
 */
import { writeSync } from 'node:fs';
import { createLogger } from '../../src/log.ts';
import { LogLinkStore } from '../../src/store/log/log-link-store.ts';
import { LogEngine } from '../../src/store/log/log-engine.ts';

const [dir, code, concurrency] = process.argv.slice(2) as [string, string, string];
// A sink of its own: the default, process.stdout, would turn our end of the pipe non-blocking, and
// a line written while the parent is too busy to read would then fail with EAGAIN instead of
// waiting for it (seen under load: the child died mid-run).
const store = new LogLinkStore(new LogEngine({ dir, fsync: 'always', log: createLogger('silent', { write: () => true }) }));
const now = Math.floor(Date.now() / 1000);
let reached = false;
// Straight into the pipe: `process.stdout` may hold lines in memory while a write is pending,
// and the kill would lose them (a granted visit the parent never hears of).
const say = (line: string): void => void writeSync(1, `${line}\n`);

async function loop(): Promise<void> {
  while (!reached) {
    const decision = await store.countVisit(code, () => now, true);
    if (decision.kind === 'found') say('found');
    else reached = true;
  }
}

say('ready');
await Promise.all(Array.from({ length: Number(concurrency) }, loop));
say('done');
await store.close();
