/**
 * The server of `src/server.ts` (the same command line, settings, start-up, serving and shutdown)
 * on faster store clocks, for the crash tests: visits flushed every `FAST_VISIT_FLUSH_MS` ms
 * instead of every second, and the log compacting itself once it passes `FAST_COMPACT_MIN_BYTES`
 * instead of 1 MiB. A load of a few hundred milliseconds then runs past several flushes and
 * compactions, where the defaults need seconds of it for one, and a kill lands after flushes and
 * during compactions all the same. Bundled like the server (`server-entry.ts`), so its coverage
 * counts as the server's.
 */
import { main } from '../../src/main.ts';

const number = (name: string): number => {
  const value = Number(process.env[name]);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, not ${process.env[name]}`);
  return value;
};

void main({ visitFlushMs: number('FAST_VISIT_FLUSH_MS'), compactMinBytes: number('FAST_COMPACT_MIN_BYTES') });
