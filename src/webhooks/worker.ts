/**
 * Delivery (docs/webhooks.md): asks the outbox for what is due, sends each row to its receiver,
 * signed, and settles it: delivered, tried again on the schedule (`schedule.ts`), given up, or the
 * subscription disabled by a `410`. Each subscription's rows go one at a time, oldest first (the
 * store hands out only a subscription's oldest row, and none while one is under way), and up to
 * `concurrency` subscriptions are served at once, so a slow receiver holds back only its own.
 *
 * Nothing is lost by stopping or dying mid-attempt: a row leaves the outbox only when settled, so
 * the next start (or, on PostgreSQL, another instance once the claim lapses) sends it again, with
 * the same `webhook-id`.
 */
import type { DeliveryAttempt, DeliveryOutcome, PendingDelivery, WebhookStore, WebhookSubscription } from '../store/webhook-store.ts';
import { keptResponse, nextAttemptAt, outcomeOf } from './schedule.ts';
import type { SendRequest, SendResult } from './send.ts';
import { deliveryHeaders } from './signing.ts';
import { eventBody } from './events.ts';

export interface WorkerOptions {
  store: WebhookStore;
  send: (req: SendRequest) => Promise<SendResult>;
  allowPrivate: boolean;
  /** Milliseconds; the tests' is fake. */
  now: () => number;
  /** Runs `f` in `ms`; returns what cancels it (the tests' runs it when their clock says). */
  timer?: (f: () => void, ms: number) => () => void;
  /** How long to wait when nothing is due before asking again (default 1 s). */
  pollMs?: number;
  /** Subscriptions served at once (default 16). */
  concurrency?: number;
  /** Told each attempt's outcome (metrics). */
  attempted?: (outcome: DeliveryOutcome, seconds: number) => void;
  /**
   * Whether the process is too busy for deliveries now (its event loop saturated by requests,
   * `busy.ts`): attempts then trickle, one a `YIELD_MS`, so requests go first and no receiver
   * waits for ever. Absent: never busy.
   */
  busy?: () => boolean;
  /** Told of a failure of the outbox itself (a store that cannot be read or written). */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

const realTimer = (f: () => void, ms: number): (() => void) => {
  const t = setTimeout(f, ms);
  t.unref();
  return () => clearTimeout(t);
};

/** While the process is too busy for deliveries, at most one attempt begins in this many milliseconds. */
const YIELD_MS = 250;

export interface Worker {
  /** Asks the outbox now rather than at the next poll (a row was just written). */
  kick(): void;
  /** Stops asking; resolves once the attempts under way have settled. */
  stop(): Promise<void>;
  /** Resolves once nothing is under way and nothing was due at the last ask (tests). */
  idle(): Promise<void>;
}

export function startWorker(options: WorkerOptions): Worker {
  const { store } = options;
  const timer = options.timer ?? realTimer;
  const pollMs = options.pollMs ?? 1000;
  const concurrency = options.concurrency ?? 16;
  const running = new Set<Promise<void>>();
  let stopped = false;
  let asking: Promise<void> | undefined;
  let again = false;
  let cancel: (() => void) | undefined;
  /** Waiters of `idle`, each with the number of asks begun when it came: only a later ask answers it. */
  let idleWaiters: { after: number; resolve: () => void }[] = [];
  let asks = 0;
  const roomNow = throttle(options);
  const known = new Map<string, WebhookSubscription>(); // `readDue`'s

  function schedule(ms: number): void {
    cancel?.();
    cancel = timer(() => void ((cancel = undefined), kick()), ms);
  }

  function kick(): void {
    if (stopped) return;
    if (asking !== undefined) {
      again = true;
      return;
    }
    asking = ask().finally(() => {
      asking = undefined;
      if (again) {
        again = false;
        kick();
      }
    });
  }

  function answerIdle(me: number): void {
    for (const w of idleWaiters.filter((w) => w.after < me)) w.resolve();
    idleWaiters = idleWaiters.filter((w) => w.after >= me);
  }

  async function ask(): Promise<void> {
    const me = ++asks;
    if (concurrency - running.size <= 0) return;
    const room = roomNow(concurrency - running.size);
    if (typeof room !== 'number') {
      // Nothing more begins before the clock moves: as idle as it will be until then.
      if (running.size === 0) answerIdle(me);
      return schedule(room.waitMs);
    }
    const { rows, subs } = (await readDue(options, room, known)) ?? { rows: [], subs: known };
    for (const row of rows) {
      const attempt = deliver(options, row, subs.get(row.subscription)).finally(() => {
        running.delete(attempt);
        kick();
      });
      running.add(attempt);
    }
    if (rows.length === 0 && running.size === 0) answerIdle(me);
    if (!stopped) schedule(pollMs);
  }

  store.listen?.(kick);
  kick();
  return {
    kick,
    async stop() {
      stopped = true;
      cancel?.();
      await asking;
      await Promise.allSettled([...running]);
    },
    idle() {
      return new Promise((resolve) => {
        idleWaiters.push({ after: asks, resolve });
        kick();
      });
    },
  };
}

/**
 * The attempts that may begin now, of `room`: all of them, or while the process is busy one a
 * `YIELD_MS` (a trickle that never starves a receiver whole), else how long to wait for it.
 */
function throttle(options: WorkerOptions): (room: number) => number | { waitMs: number } {
  let trickled = Number.NEGATIVE_INFINITY;
  return (room) => {
    if (options.busy?.() !== true) return room;
    const at = options.now();
    if (at - trickled < YIELD_MS) return { waitMs: YIELD_MS - (at - trickled) };
    trickled = at;
    return 1;
  };
}

/** The rows due now and their subscriptions, or undefined (warned) when the outbox cannot be read. */
async function readDue(
  options: WorkerOptions,
  room: number,
  known: Map<string, WebhookSubscription>,
): Promise<{ rows: readonly PendingDelivery[]; subs: Map<string, WebhookSubscription> } | undefined> {
  try {
    const rows = await options.store.due(options.now(), room);
    // The list is read again only for a subscription not seen yet (made since): not once a delivery,
    // which on PostgreSQL was a query each. A subscription has no edit, and a deleted one's rows go
    // with it, so what is known stays true.
    if (rows.some((row) => !known.has(row.subscription))) {
      known.clear();
      for (const sub of await options.store.subscriptions()) known.set(sub.id, sub);
    }
    return { rows, subs: known };
  } catch (err) {
    options.warn?.('webhooks: could not read the outbox; will retry', { error: (err as Error).message });
    return undefined;
  }
}

/** One attempt of `row`, settled in the store whatever came of it. */
async function deliver(options: WorkerOptions, row: PendingDelivery, sub: WebhookSubscription | undefined): Promise<void> {
  const { store, now } = options;
  const started = now();
  let result: SendResult;
  if (sub === undefined) result = { error: 'the subscription is gone', response: '', durationMs: 0 };
  else {
    // The same for every attempt, so a retry is the same message.
    const body = eventBody(row.event.type, row.event.time, row.event.data);
    const headers = deliveryHeaders(sub.secret, row.event.id, Math.floor(started / 1000), body);
    result = await options.send({ url: sub.url, headers, body, allowPrivate: options.allowPrivate });
  }
  const verdict = outcomeOf(result);
  const next = verdict === 'retry' ? nextAttemptAt(row.attempts + 1, now()) : null;
  const outcome: DeliveryOutcome = verdict === 'disable' ? 'disabled' : verdict === 'delivered' ? 'delivered' : next === 'failed' ? 'failed' : 'retry';
  const attempt: DeliveryAttempt = {
    at: started,
    eventId: row.event.id,
    type: row.event.type,
    status: result.status ?? null,
    durationMs: result.durationMs,
    error: errorOf(result, verdict),
    outcome,
  };
  options.attempted?.(outcome, result.durationMs / 1000);
  try {
    await store.settle(row, attempt, typeof next === 'number' ? next : null);
  } catch (err) {
    // Unsettled, the row stays owed and is sent again: at least once, never lost.
    options.warn?.('webhooks: could not record a delivery; it will be sent again', { error: (err as Error).message });
  }
}

/** What the list of deliveries says of an attempt that was not a 2xx: why, or the start of the answer. */
function errorOf(result: SendResult, verdict: 'delivered' | 'retry' | 'disable'): string | null {
  if (result.timedOut === true) return 'timed out';
  if (result.error !== undefined) return keptResponse(result.error);
  if (verdict === 'delivered') return null;
  return result.response === '' ? null : result.response;
}
