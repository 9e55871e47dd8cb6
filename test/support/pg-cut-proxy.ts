/**
 * A TCP proxy in front of a PostgreSQL server that can cut the next exchange in half, for the
 * fault tests of what a lost connection means (docs/postgres.md, visit limits):
 *
 * - `cutRequest()`: the next bytes a client sends are dropped and its connection closed, so the
 *   statement never reaches the server;
 * - `cutReply()`: the next statement passes, and the connection is closed as the server's
 *   report of its completion comes back, which is dropped: the server has run (and committed) the
 *   statement, and the client never hears it. Only the messages of the server are read for this
 *   (type byte, length): the completion is the first `CommandComplete`; what comes before it (a
 *   prepared statement's description) passes.
 *
 * Each cut happens once; connections opened after it pass everything. Closed after the test file.
 */
import { tcpProxy } from './pg.ts';

/** The type byte of the server's `CommandComplete` message (PostgreSQL's protocol, version 3). */
const COMMAND_COMPLETE = 'C'.charCodeAt(0);

export interface CutProxy {
  /** `url` with the proxy's port in place of the server's. */
  url: string;
  cutRequest(): void;
  cutReply(): void;
  /** Resolves once the armed cut has happened. */
  cut(): Promise<void>;
}

export async function cutProxy(url: string): Promise<CutProxy> {
  let armed: 'request' | 'reply' | undefined;
  let done = (): void => undefined;
  let happened = Promise.resolve();
  const arm = (how: 'request' | 'reply'): void => {
    armed = how;
    happened = new Promise<void>((resolve) => (done = resolve));
  };
  const proxied = await tcpProxy(url, (client, upstream) => {
    const cut = (): void => {
      armed = undefined;
      client.destroy();
      upstream.destroy();
      done();
    };
    client.on('data', (chunk: Buffer) => (armed === 'request' ? cut() : upstream.write(chunk)));
    // The server's bytes not yet passed on while a reply cut is armed: whole messages go on at once.
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      if (armed !== 'reply' && pending.length === 0) return void client.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      let at = 0;
      while (armed === 'reply' && pending.length - at >= 5) {
        const end = at + 1 + pending.readUInt32BE(at + 1);
        if (pending[at] === COMMAND_COMPLETE) return cut();
        if (end > pending.length) break;
        at = end;
      }
      if (armed !== 'reply') at = pending.length;
      client.write(pending.subarray(0, at));
      pending = pending.subarray(at);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  return { url: proxied, cutRequest: () => arm('request'), cutReply: () => arm('reply'), cut: () => happened };
}
