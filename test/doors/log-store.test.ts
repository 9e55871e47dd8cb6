/**
 * The door conformance suite (test/support/door-conformance.ts) on the log store: every case through
 * REST, MCP, Shlink's REST v3 and YOURLS' API against one server. The store is down when its disk
 * is full (`disk-full.ts`): writes fail, and reads go on from memory.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShortener } from '../../src/app.ts';
import { fillableDisk } from '../support/disk-full.ts';
import { runDoorConformance } from '../support/door-conformance.ts';
import { tempDir } from '../support/helpers.ts';

runDoorConformance({
  name: 'log store',
  outageReason: 'storage is not writable right now (ENOSPC); nothing was changed, try again later',
  readsDuringOutage: true,
  async open(settings) {
    const { fs, disk } = fillableDisk();
    const dir = tempDir();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const shortener = createShortener({ ...settings, dataDir: dir, fsync: 'off', fs, baseUrl: `http://127.0.0.1:${port}` });
    server.on('request', shortener.handler);
    return {
      port,
      async down() {
        disk.full = true;
      },
      async up() {
        disk.full = false;
      },
      async close() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await shortener.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
});
