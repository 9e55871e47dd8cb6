/**
 * A file layer for the store whose log writes wait while `ctl.hold` is set, until `release()`,
 * and fail with ENOSPC while `ctl.fail` is set: for tests that need a write in flight at a chosen
 * moment (a visit or an edit while the previous write is on its way to the disk). `oneFailingWrite`
 * holds one write and then fails it, the writes after it going through: a full disk that recovers.
 */
import { nodeFs, type StoreFs } from '../../src/store/log/fs.ts';

export interface HeldWrites {
  fs: StoreFs;
  ctl: { hold: boolean; fail: boolean };
  /** Resolves once a write is waiting (at once if one is): the moment to act "during" it, without a timer. */
  held(): Promise<void>;
  release(): void;
}

export function heldWrites(): HeldWrites {
  const ctl = { hold: false, fail: false };
  const waiting: (() => void)[] = [];
  let onHeld: (() => void) | undefined;
  const fs: StoreFs = {
    ...nodeFs,
    async write(fd, data, position) {
      if (ctl.fail) throw Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
      if (ctl.hold) {
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          onHeld?.();
        });
      }
      return nodeFs.write(fd, data, position);
    },
  };
  const release = (): void => {
    ctl.hold = false;
    for (const go of waiting.splice(0)) go();
  };
  const held = (): Promise<void> => (waiting.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => (onHeld = resolve)));
  return { fs, ctl, held, release };
}

/** A file layer whose next write, once armed, waits for `fail()` and then fails with ENOSPC; every other write succeeds. */
export function oneFailingWrite() {
  let armed = false;
  let onHeld: (() => void) | undefined;
  let fail!: () => void;
  const failing = new Promise<void>((resolve) => (fail = resolve));
  const fs: StoreFs = {
    ...nodeFs,
    async write(fd, data, position) {
      if (!armed) return nodeFs.write(fd, data, position);
      armed = false;
      onHeld?.();
      await failing;
      throw Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
    },
  };
  return { fs, arm: () => void (armed = true), held: () => new Promise<void>((resolve) => (onHeld = resolve)), fail };
}
