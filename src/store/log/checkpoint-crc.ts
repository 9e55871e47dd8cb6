/**
 * The checksums of a start-up checkpoint's sections, checked on a thread of their own while this
 * one reads the sections into the keydir (`checkpoint.ts`).
 *
 * Why: at ten million links the CRC-32 of 1.4 GB is a fifth of a start from the checkpoint, and
 * the start is otherwise bound by reading those bytes into fresh memory; a second core, where
 * there is one, checks them meanwhile. The thread reads the file on its own, through one buffer it
 * reuses, and answers through shared memory: start-up is synchronous, and waits for the answer with
 * `Atomics.wait` before it takes the keydir. Without an answer (no thread could be started, an
 * error) the checksums are computed here, from the file, as the thread would have.
 */
import { Worker } from 'node:worker_threads';
import { crc32, crc32Fallback } from './crc32.ts';
import type { StoreFs } from './fs.ts';
import { readFully } from './checkpoint-block-reader.ts';

/** A section to check: where it starts in the file, its bytes, its CRC-32. */
export type Checked = [at: number, bytes: number, crc: number];

/** Bytes the checking thread reads at a time. */
const CHUNK = 8 << 20;

/**
 * Checkpoints smaller than this are checked here: a thread takes about 60 ms to start and answer,
 * what the check of 64 MiB takes on this thread (about 450,000 links), and a small data directory
 * (and a test suite's hundreds of starts) should not pay it.
 */
export const THREAD_MIN_BYTES = 64 << 20;

/** Whether `sections` are worth a thread of their own: `minBytes` or more in all. */
export const worthAThread = (sections: Checked[], minBytes = THREAD_MIN_BYTES): boolean => sections.reduce((n, [, size]) => n + size, 0) >= minBytes;

/** States of the shared word: not done yet, all good, a section bad (its index in the next word), could not check. */
const PENDING = 0;
const GOOD = 1;
const BAD = 2;
const FAILED = 3;

/**
 * The thread: CommonJS evaluated from this text, so that it needs no file of its own beside a
 * bundled server. Its `zlib.crc32` is the one `crc32.ts` uses where it exists; this is only started
 * where it does.
 */
const THREAD = `
const { workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { crc32 } = require('node:zlib');
const { path, sections, chunk, shared } = workerData;
const state = new Int32Array(shared);
let result = ${GOOD};
try {
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(chunk);
  try {
    for (let i = 0; i < sections.length && result === ${GOOD}; i++) {
      const [at, bytes, expected] = sections[i];
      let crc = 0;
      for (let done = 0; done < bytes; ) {
        const n = readSync(fd, buf, 0, Math.min(chunk, bytes - done), at + done);
        if (n === 0) throw new Error('cut short');
        crc = crc32(buf.subarray(0, n), crc);
        done += n;
      }
      if (crc !== expected) {
        state[1] = i;
        result = ${BAD};
      }
    }
  } finally {
    closeSync(fd);
  }
} catch {
  result = ${FAILED};
}
Atomics.store(state, 0, result);
Atomics.notify(state, 0);
`;

/** The checksums of `sections` of the file `path`, being checked; `verdict` waits for them. */
export interface ParallelCheck {
  /** -1 when every section is good, else the index of the first bad one; undefined when they could not be checked. */
  verdict(): number | undefined;
  /** Stops the thread if it still runs (a start that gave the checkpoint up for another reason). */
  stop(): void;
}

/** Starts checking `sections` of `path` on another thread; undefined where that cannot be done (no native CRC-32). */
export function checkInParallel(path: string, sections: Checked[]): ParallelCheck | undefined {
  if (crc32 === crc32Fallback) return undefined;
  const bytes = sections.reduce((n, [, size]) => n + size, 0);
  const shared = new SharedArrayBuffer(8);
  const state = new Int32Array(shared);
  let worker: Worker;
  try {
    // No flags of this process (`--input-type=module`, `--import` of a loader): the text is CommonJS, alone.
    worker = new Worker(THREAD, { eval: true, execArgv: [], workerData: { path, sections, chunk: CHUNK, shared } });
  } catch {
    return undefined;
  }
  // Its exit is its own business: nothing waits for it but `verdict`.
  worker.unref();
  worker.on('error', () => undefined);
  return {
    verdict() {
      // Ten seconds and one more a 100 MB (its read and CRC take about 0.6 s a GB): past that, the
      // thread is taken to have failed without a word, and the checksums are computed here.
      Atomics.wait(state, 0, PENDING, 10_000 + bytes / 100_000);
      const result = Atomics.load(state, 0);
      return result === GOOD ? -1 : result === BAD ? state[1]! : undefined;
    },
    stop() {
      if (Atomics.load(state, 0) === PENDING) void worker.terminate();
    },
  };
}

/** The same check, on this thread, through `fs`: -1 when every section is good, else the index of the first bad one. */
export function checkHere(fs: StoreFs, fd: number, sections: Checked[]): number {
  let buf = Buffer.allocUnsafe(0);
  for (let i = 0; i < sections.length; i++) {
    const [at, bytes, expected] = sections[i]!;
    let crc = 0;
    for (let done = 0; done < bytes; ) {
      const n = Math.min(CHUNK, bytes - done);
      if (buf.length < n) buf = Buffer.allocUnsafe(n);
      if (!readFully(fs, fd, buf.subarray(0, n), at + done)) return i;
      crc = crc32(buf.subarray(0, n), crc);
      done += n;
    }
    if (crc !== expected) return i;
  }
  return -1;
}
