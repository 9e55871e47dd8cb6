/**
 * A file layer for the store whose disk can be made full: writes (and the truncates that undo a
 * failed one) fail with ENOSPC while `disk.full` is set, or once `disk.writesLeft` writes are used.
 */
import { nodeFs, type StoreFs } from '../../src/store/fs.ts';

export interface FillableDisk {
  fs: StoreFs;
  disk: { full: boolean; writesLeft: number };
}

export function fillableDisk(): FillableDisk {
  const disk = { full: false, writesLeft: Infinity };
  const enospc = (): Error => Object.assign(new Error('ENOSPC: simulated'), { code: 'ENOSPC' });
  const fs: StoreFs = {
    ...nodeFs,
    async write(fd, data, position) {
      if (disk.full || disk.writesLeft <= 0) throw enospc();
      disk.writesLeft--;
      return nodeFs.write(fd, data, position);
    },
    async truncate(fd, length) {
      if (disk.full || disk.writesLeft <= 0) throw enospc();
      return nodeFs.truncate(fd, length);
    },
  };
  return { fs, disk };
}
