/**
 * `sql.begin` that never has the driver write to a connection it has closed.
 *
 * postgres.js (3.4.9, the newest) answers a transaction body that settles after its connection
 * closed (a statement the close failed, or a body that went on after a pause) with a `rollback` or
 * a `commit` on that connection, and sends there any statement made after the close too. Each goes
 * out from a timer to a socket that is gone, and throws where nothing can catch it: the process
 * ends (porsager/postgres#1154, #1208). A backend terminated in the middle of a transaction
 * (`pg_terminate_backend`, a failover, an idle-in-transaction timeout) took an instance down.
 *
 * The server ended the transaction with its session, so nothing more needs sending. Here:
 * - the body's `tx` refuses any statement once the connection closed (`refusal()` is thrown);
 * - a body that settles after the close is left pending, so the driver sends nothing more.
 *   `begin` has rejected at the close already: the driver races the body with it.
 */
import type postgres from 'postgres';

/** The driver's codes of a connection it closed (a socket error is answered before the close). */
const CLOSED = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED']);

const closedBy = (err: unknown): boolean => CLOSED.has((err as { code?: unknown } | null)?.code as string);

/** Never settles: the body of a transaction whose connection is gone (see above). */
const forsaken = (): Promise<never> => new Promise<never>(() => undefined);

/** `tx`, each call of it or of its methods refused (`refusal()` thrown) once `closed()`. */
function refusingOnceClosed<S extends object>(tx: S, closed: () => boolean, refusal: () => Error): S {
  const check = (): void => {
    if (closed()) throw refusal();
  };
  return new Proxy(tx, {
    apply(target, self, args) {
      check();
      return Reflect.apply(target as (...a: unknown[]) => unknown, self, args);
    },
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        check();
        return Reflect.apply(value, target, args);
      };
    },
  });
}

/** An error with the code the driver gives a statement on a closed connection: calls.ts reads it as unavailable. */
const connectionClosed = (): Error => Object.assign(new Error('the connection of this transaction is closed'), { code: 'CONNECTION_CLOSED' });

/**
 * `sql.begin(mode, body)`, guarded as the file says; `refusal()` is the error of a statement made
 * after the close.
 */
export function beginGuarded<T>(
  sql: postgres.Sql,
  mode: string,
  body: (tx: postgres.TransactionSql) => Promise<T>,
  refusal: () => Error = connectionClosed,
): Promise<T> {
  let closed = false;
  const work = sql.begin(mode, async (tx) => {
    const guarded = refusingOnceClosed(tx, () => closed, refusal);
    let result: T;
    try {
      result = await body(guarded);
    } catch (err) {
      // A close fails the body's statement a few promise turns before `begin` rejects: a turn of
      // the event loop lets that land. Only a failing body waits for it.
      await new Promise((resolve) => setImmediate(resolve));
      if (closed || closedBy(err)) return forsaken();
      throw err;
    }
    return closed ? forsaken() : result;
  }) as Promise<T>;
  // Rejected at the close (the driver's race), or once a failed body was rolled back: either way
  // nothing may be sent in this transaction's name after it.
  work.catch(() => {
    closed = true;
  });
  return work;
}
