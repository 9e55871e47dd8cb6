/**
 * Long answers share the event loop. A body made of many pieces (a list of 100k links is 21 MB of
 * JSON) is written by a pacer: it takes one piece from each long answer in turn, for at most
 * `budgetMs` of an event-loop turn, then lets the loop run (I/O, timers, other requests) before the
 * next round. So no turn spends more than the budget plus one piece on them, however many answers
 * are being written and however fast their clients read.
 *
 * Why awaiting the socket is not enough: when the kernel takes a whole write at once (a client
 * that reads fast, or loopback buffers with room), Node emits `drain` from `process.nextTick`. A
 * loop of "write, await drain" then goes from one microtask to the next and never returns to the
 * event loop: the whole body goes out in a single turn (151 ms for 100k links, measured).
 */
import { performance } from 'node:perf_hooks';

/** What the pacer needs of a response (`ServerResponse` has it). */
export interface Sink {
  readonly destroyed: boolean;
  /** False when the caller should wait for `drain` before writing more. */
  write(chunk: string): boolean;
  end(): void;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

export interface PacerOptions {
  /** Work per event-loop turn, ms, before the pacer yields (default 10). */
  budgetMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
  /** Runs `fn` in a later turn of the event loop (default `setImmediate`: after pending I/O). */
  defer?: (fn: () => void) => void;
}

/**
 * A piece of a body, or a promise of one: a piece read from a database arrives later, and its
 * answer waits for it outside the rounds while the others go on.
 */
export type Piece = string | Promise<string>;

/** Writes `pieces` to `sink`, then ends it. Resolves when done or when the client went away. */
export type Pace = (sink: Sink, pieces: Iterator<Piece>) => Promise<void>;

interface Job {
  sink: Sink;
  pieces: Iterator<Piece>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export function createPacer({ budgetMs = 10, now = () => performance.now(), defer = setImmediate }: PacerOptions = {}): Pace {
  /** Answers whose next piece may be written now, in round-robin order. */
  const ready: Job[] = [];
  let scheduled = false;

  function schedule(): void {
    if (scheduled || ready.length === 0) return;
    scheduled = true;
    defer(round);
  }

  function round(): void {
    scheduled = false;
    const until = now() + budgetMs;
    while (ready.length > 0) {
      step(ready.shift()!);
      if (now() >= until) break;
    }
    schedule();
  }

  function step(job: Job): void {
    const { sink } = job;
    if (sink.destroyed) return job.resolve();
    let next: IteratorResult<Piece>;
    try {
      next = job.pieces.next();
    } catch (err) {
      return job.reject(err);
    }
    if (next.done) {
      sink.end();
      return job.resolve();
    }
    if (typeof next.value === 'string') return put(job, next.value, false);
    next.value.then((piece) => put(job, piece, true), job.reject);
  }

  /** Writes one piece; `late`: it arrived after its round, which must be scheduled again. */
  function put(job: Job, piece: string, late: boolean): void {
    const { sink } = job;
    if (sink.destroyed) return job.resolve();
    if (sink.write(piece)) {
      ready.push(job);
      if (late) schedule();
      return;
    }
    // Back in the queue once the client took what is buffered (or left), and only in a later
    // turn: `schedule` defers even when `drain` comes at once.
    const resume = (): void => {
      sink.off('drain', resume);
      sink.off('close', resume);
      ready.push(job);
      schedule();
    };
    sink.on('drain', resume);
    sink.on('close', resume);
  }

  return function pace(sink, pieces) {
    return new Promise((resolve, reject) => {
      ready.push({ sink, pieces, resolve, reject });
      schedule();
    });
  };
}

/** The process's pacer: every long answer of every shortener in the process shares one event loop. */
export const pace: Pace = createPacer();
