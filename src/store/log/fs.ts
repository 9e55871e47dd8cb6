/**
 * The few file operations the store performs, behind an interface so tests can make them slow or
 * make them fail (a full or read-only disk) without a real broken disk.
 */
import * as fs from 'node:fs';

export interface StoreFs {
  mkdirp(dir: string): void;
  /** Opens for reading and positional writing, creating the file (mode 0600) if missing. */
  open(path: string): { fd: number; created: boolean };
  /** Reads into `buffer` from `position`; returns the bytes read (0 at the end). */
  read(fd: number, buffer: Buffer, position: number): number;
  /** The whole file at `path` (`--repair` reads a damaged log at once; start-up reads in chunks). */
  readAll(path: string): Buffer;
  /** Writes every byte of `data` at `position`. */
  write(fd: number, data: Buffer, position: number): Promise<void>;
  fsync(fd: number): Promise<void>;
  truncate(fd: number, length: number): Promise<void>;
  close(fd: number): Promise<void>;
  /** fsyncs a directory so a created or renamed entry in it survives power loss. */
  syncDir(dir: string): void;
  /** Creates (or empties) a file for writing; mode 0600. */
  create(path: string): number;
  /** Atomically replaces `to` with `from`. */
  rename(from: string, to: string): void;
  /** Removes a file; no error if it does not exist. */
  remove(path: string): void;
  /**
   * `remove` off the event loop: freeing a large file's blocks (a start-up checkpoint of 10M links
   * is 1.4 GB) takes the file system a quarter of a second, which a running server must not stall for.
   */
  removeLater(path: string): Promise<void>;
  /** Creates `path` holding `data`, fsynced before it returns; EEXIST if it exists. Mode 0600. */
  writeNew(path: string, data: Buffer): void;
  /**
   * True when `fd` is still the file `path` names: not unlinked (`rm -rf` of its directory), not
   * replaced by another file or directory (same device and inode). False when either check fails.
   */
  isAt(fd: number, path: string): boolean;
  exists(path: string): boolean;
  /** Gives the file `from` a second name `to` (a hard link); EEXIST if `to` exists. */
  link(from: string, to: string): void;
  /** Opens for reading only; undefined when there is no such file (the start-up checkpoint). */
  openRead(path: string): number | undefined;
  /** The file's identity (device and inode) and size. */
  stat(fd: number): { id: string; size: number };
  // The start-up checkpoint is written in one synchronous step (`checkpoint.ts`): these three are
  // `write`, `fsync` and `close` without a turn of the event loop between the first and the last.
  /** Writes every byte of `data` at `position`, synchronously. */
  writeSync(fd: number, data: Uint8Array, position: number): void;
  fsyncSync(fd: number): void;
  closeSync(fd: number): void;
}

function callback(resolve: () => void, reject: (err: Error) => void) {
  return (err: NodeJS.ErrnoException | null) => (err ? reject(err) : resolve());
}

export const nodeFs: StoreFs = {
  mkdirp(dir) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  },
  open(path) {
    try {
      return { fd: fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600), created: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return { fd: fs.openSync(path, fs.constants.O_RDWR), created: false };
    }
  },
  read(fd, buffer, position) {
    return fs.readSync(fd, buffer, 0, buffer.length, position);
  },
  readAll(path) {
    return fs.readFileSync(path);
  },
  write(fd, data, position) {
    return new Promise((resolve, reject) => {
      const step = (offset: number): void => {
        fs.write(fd, data, offset, data.length - offset, position + offset, (err, written) => {
          if (err) return reject(err);
          if (offset + written < data.length) return step(offset + written);
          resolve();
        });
      };
      step(0);
    });
  },
  fsync(fd) {
    return new Promise((resolve, reject) => fs.fsync(fd, callback(resolve, reject)));
  },
  truncate(fd, length) {
    return new Promise((resolve, reject) => fs.ftruncate(fd, length, callback(resolve, reject)));
  },
  close(fd) {
    return new Promise((resolve, reject) => fs.close(fd, callback(resolve, reject)));
  },
  create(path) {
    return fs.openSync(path, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600);
  },
  rename(from, to) {
    fs.renameSync(from, to);
  },
  remove(path) {
    fs.rmSync(path, { force: true });
  },
  removeLater(path) {
    return fs.promises.rm(path, { force: true });
  },
  writeNew(path, data) {
    const fd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    try {
      for (let at = 0; at < data.length; ) at += fs.writeSync(fd, data, at, data.length - at, at);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
  isAt(fd, path) {
    try {
      const open = fs.fstatSync(fd, { bigint: true });
      if (open.nlink === 0n) return false;
      const named = fs.statSync(path, { bigint: true, throwIfNoEntry: false });
      return named !== undefined && named.ino === open.ino && named.dev === open.dev;
    } catch {
      return false;
    }
  },
  exists(path) {
    return fs.existsSync(path);
  },
  link(from, to) {
    fs.linkSync(from, to);
  },
  openRead(path) {
    try {
      return fs.openSync(path, fs.constants.O_RDONLY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  },
  stat(fd) {
    const st = fs.fstatSync(fd, { bigint: true });
    return { id: `${st.dev}:${st.ino}`, size: Number(st.size) };
  },
  writeSync(fd, data, position) {
    // One call writes at most 2 GiB: a larger array goes in steps.
    for (let at = 0; at < data.length; ) at += fs.writeSync(fd, data, at, Math.min(data.length - at, 1 << 30), position + at);
  },
  fsyncSync(fd) {
    fs.fsyncSync(fd);
  },
  closeSync(fd) {
    fs.closeSync(fd);
  },
  syncDir(dir) {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
};
