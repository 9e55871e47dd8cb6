/**
 * A file layer for the store whose disk can be made full: writes (and the truncates that undo a
 * failed one) fail with ENOSPC while `disk.full` is set, or once `disk.writesLeft` writes are used.
 * `disk.bytesLeft` is a disk with that much room: a write that does not fit fails with ENOSPC and
 * writes nothing, while a smaller one after it may still fit, as on a real disk.
 */
import { nodeFs, type StoreFs } from '../../src/store/log/fs.ts';

export interface FillableDisk {
  fs: StoreFs;
  disk: { full: boolean; writesLeft: number; bytesLeft: number };
}

export function fillableDisk(): FillableDisk {
  const disk = { full: false, writesLeft: Infinity, bytesLeft: Infinity };
  const enospc = (): Error => Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
  const fs: StoreFs = {
    ...nodeFs,
    async write(fd, data, position) {
      if (disk.full || disk.writesLeft <= 0 || data.length > disk.bytesLeft) throw enospc();
      disk.writesLeft--;
      disk.bytesLeft -= data.length;
      return nodeFs.write(fd, data, position);
    },
    async truncate(fd, length) {
      if (disk.full || disk.writesLeft <= 0) throw enospc();
      return nodeFs.truncate(fd, length);
    },
  };
  return { fs, disk };
}

const errno = (code: string): Error => Object.assign(new Error(`${code}: simulated`), { code });

/** The disk of `fillableDisk`, whose writes can also fail with another errno, and whose fsyncs can fail. */
export function faultyDisk() {
  const { fs, disk } = fillableDisk();
  const faults = { write: undefined as string | undefined, fsync: undefined as string | undefined };
  return {
    disk,
    faults,
    fs: {
      ...fs,
      async write(fd: number, data: Buffer, position: number) {
        if (faults.write) throw errno(faults.write);
        return fs.write(fd, data, position);
      },
      async fsync(fd: number) {
        if (faults.fsync) throw errno(faults.fsync);
        return fs.fsync(fd);
      },
    },
  };
}
