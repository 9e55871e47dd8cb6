/**
 * A child process for the crash tests of visit events: the shortener on the log store, mounted on a
 * `node:http` server as a library user would, that compacts its log again and again while it
 * serves, so that a `kill -9` lands before, during and after compactions (a log of a few hundred
 * kilobytes never reaches the automatic compaction's 1 MiB floor). Settings come from the
 * environment: `DATA_DIR`, `API_KEYS`, `TRUST_PROXY`; `COMPACT_EVERY_MS` is the pause between
 * compactions, `FAST_VISIT_FLUSH_MS` the visit flush's interval (`server-entry.ts`, `FAST_CLOCKS`). Its stdout is JSON lines, like the server's: `listening` (with `url`) once ready,
 * and `log compacted` after each compaction.
 *
 *   node --import ./scripts/ts-loader.mjs test/support/compacting-server.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createShortener } from '../../src/app.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const shortener = createShortener({
  dataDir: env('DATA_DIR'),
  apiKeys: [env('API_KEYS')],
  trustProxy: Number(env('TRUST_PROXY')),
  fsync: 'always',
  logLevel: 'info',
  visitFlushMs: Number(env('FAST_VISIT_FLUSH_MS')),
  baseUrl: `http://127.0.0.1:${port}`,
});
server.on('request', shortener.handler);
const say = (line: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
say({ level: 'info', msg: 'listening', url: `http://127.0.0.1:${port}` });

const pause = Number(env('COMPACT_EVERY_MS'));
for (;;) {
  await delay(pause);
  const report = await shortener.compact();
  say({ level: 'info', msg: 'log compacted', ...report });
}
