/**
 * The connection table of the self-hosting server (connections.ts), without a socket: who is
 * closed to admit a new connection at the cap, who is refused, and who is closed on shutdown.
 * The real-socket side is in silent-connections.test.ts, hardening.test.ts and shutdown.test.ts;
 * the last test here checks on a real server that the table keeps no response alive.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Agent, createServer, get } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ConnectionTable, type Pending, type Slot } from '../../src/http/connections.ts';
import { trackConnections } from '../../src/http/tracking.ts';

/** A response as the table sees it: not sent until `send()`, which then reports `'close'`. */
class Response implements Pending {
  writableFinished = false;
  private readonly listeners: (() => void)[] = [];
  once(_event: 'close', listener: () => void): this {
    this.listeners.push(listener);
    return this;
  }
  send(): void {
    this.writableFinished = true;
    for (const listener of this.listeners.splice(0)) listener();
  }
}

/**
 * A table of named connections that records which ones it closed, reporting each close back as a
 * socket would; `t` speaks names and keeps each connection's slot, as the server keeps it on the
 * socket. `finished(name)` sends the connection's oldest unsent response, as node:http sends
 * pipelined responses in order.
 */
function table(max: number) {
  const closedByTable: string[] = [];
  const slots = new Map<string, Slot<string>>();
  const unsent = new Map<string, Response[]>();
  const slot = (name: string): Slot<string> => slots.get(name)!;
  // As node:http does: a connection's first unsent response is the one it owes.
  const inner: ConnectionTable<string> = new ConnectionTable<string>(
    max,
    (conn) => {
      closedByTable.push(conn);
      inner.closed(slot(conn));
    },
    (conn) => unsent.get(conn)?.[0] ?? null,
  );
  const t = {
    admit(name: string): boolean {
      const s = inner.admit(name);
      if (s) slots.set(name, s);
      return s !== undefined;
    },
    started(name: string): void {
      const res = new Response();
      unsent.set(name, [...(unsent.get(name) ?? []), res]);
      inner.started(slot(name));
    },
    finished: (name: string) => unsent.get(name)!.shift()!.send(),
    closed: (name: string) => inner.closed(slot(name)),
    drain: () => inner.drain(),
    /** Closes the connections `pick` names, told of each whether it is busy; returns what it was told. */
    closeWhere(pick: (name: string, busy: boolean) => boolean): [string, boolean][] {
      const seen: [string, boolean][] = [];
      inner.closeWhere((s, busy) => {
        seen.push([s.conn, busy]);
        return pick(s.conn, busy);
      });
      return seen.sort();
    },
    served: (name: string) => slot(name).latest !== slot(name).born,
    get size() {
      return inner.size;
    },
    get inFlight() {
      return inner.inFlight;
    },
    get isDraining() {
      return inner.isDraining;
    },
  };
  return { t, closedByTable };
}

test('at the cap again, a connection that started a request since the last eviction is no longer the oldest', () => {
  const { t, closedByTable } = table(3);
  for (const name of ['a', 'b', 'c']) t.admit(name);
  for (const name of ['a', 'b', 'c']) t.started(name);
  for (const name of ['a', 'b', 'c']) t.finished(name);
  assert.equal(t.admit('d'), true);
  assert.deepEqual(closedByTable, ['a']);
  // b was next in line when a went; its new request puts it behind c and d.
  t.started('b');
  t.finished('b');
  assert.equal(t.admit('e'), true);
  assert.deepEqual(closedByTable, ['a', 'c']);
  assert.equal(t.admit('f'), true);
  assert.deepEqual(closedByTable, ['a', 'c', 'd']);
});

type Step = { op: 'admit' } | { op: 'started' | 'finished' | 'closed'; pick: number };

test('property: against a model that keeps every stamp and sorts at the cap, the table closes and refuses exactly the same connections', () => {
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 3, arbitrary: fc.constant({ op: 'admit' as const }) },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('started' as const), pick: fc.nat() }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('finished' as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('closed' as const), pick: fc.nat() }) },
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 200 }), (max, steps) => {
      const { t, closedByTable } = table(max);
      // The model: each open connection's latest start (or admission) and its responses not yet sent.
      const model = new Map<string, { latest: number; unsent: number }>();
      let clock = 0;
      let next = 0;
      const modelClosed: string[] = [];
      for (const s of steps) {
        const names = [...model.keys()];
        if (s.op === 'admit') {
          const name = `c${next++}`;
          let admitted = true;
          if (model.size >= max) {
            const idle = [...model].filter(([, c]) => c.unsent === 0).sort((a, b) => a[1].latest - b[1].latest);
            if (idle.length === 0) admitted = false;
            else {
              model.delete(idle[0]![0]);
              modelClosed.push(idle[0]![0]);
            }
          }
          if (admitted) model.set(name, { latest: ++clock, unsent: 0 });
          assert.equal(t.admit(name), admitted, `admit ${name}`);
        } else {
          if (names.length === 0) continue;
          const name = names[s.pick % names.length]!;
          const c = model.get(name)!;
          if (s.op === 'started') {
            c.latest = ++clock;
            c.unsent++;
            t.started(name);
          } else if (s.op === 'finished') {
            if (c.unsent === 0) continue;
            c.unsent--;
            t.finished(name);
          } else {
            model.delete(name);
            t.closed(name);
          }
        }
        assert.deepEqual(closedByTable, modelClosed);
        assert.equal(t.size, model.size);
        assert.equal(t.inFlight, [...model.values()].filter((c) => c.unsent > 0).length);
      }
    }),
    { numRuns: 500 },
  );
});

test('below the cap every connection is admitted and none is closed', () => {
  const { t, closedByTable } = table(3);
  for (const c of ['a', 'b', 'c']) assert.equal(t.admit(c), true);
  assert.equal(t.size, 3);
  assert.deepEqual(closedByTable, []);
});

test('at the cap the oldest connection without a request in flight is closed to admit the new one', () => {
  const { t, closedByTable } = table(3);
  t.admit('silent-1');
  t.admit('busy');
  t.admit('silent-2');
  t.started('busy');
  assert.equal(t.admit('new-1'), true);
  assert.deepEqual(closedByTable, ['silent-1'], 'the oldest silent one, not the older one in flight');
  assert.equal(t.admit('new-2'), true);
  assert.deepEqual(closedByTable, ['silent-1', 'silent-2']);
  assert.equal(t.size, 3);
  assert.equal(t.inFlight, 1);
});

test('an idle kept-alive connection counts from when its latest request began', () => {
  const { t, closedByTable } = table(3);
  t.admit('kept-alive');
  t.admit('silent');
  // Began after `silent` connected: `silent` has gone longer without a request.
  t.started('kept-alive');
  t.finished('kept-alive');
  t.admit('third');
  assert.equal(t.admit('new'), true);
  assert.deepEqual(closedByTable, ['silent']);
  assert.equal(t.admit('newer'), true);
  assert.deepEqual(closedByTable, ['silent', 'kept-alive']);
});

test('when every slot has a request in flight the new connection is refused and nothing is closed', () => {
  const { t, closedByTable } = table(2);
  t.admit('a');
  t.admit('b');
  t.started('a');
  t.started('b');
  assert.equal(t.admit('c'), false);
  assert.deepEqual(closedByTable, []);
  assert.equal(t.size, 2);
  // Once one is answered it is the one to go.
  t.finished('b');
  assert.equal(t.admit('c'), true);
  assert.deepEqual(closedByTable, ['b']);
});

test('pipelined requests: a connection is in flight until its last response is sent', () => {
  const { t, closedByTable } = table(2);
  t.admit('piped');
  t.admit('other');
  t.started('piped');
  t.started('piped');
  t.finished('piped');
  t.started('other');
  assert.equal(t.admit('new'), false, 'one request of `piped` is still in flight');
  t.finished('piped');
  assert.equal(t.admit('new'), true);
  assert.deepEqual(closedByTable, ['piped']);
});

test('a connection closed by the client leaves the table; late events about it change nothing', () => {
  const { t, closedByTable } = table(2);
  t.admit('gone');
  t.admit('busy');
  t.started('busy');
  t.started('gone');
  t.closed('gone');
  t.finished('gone');
  t.started('gone');
  assert.equal(t.size, 1);
  assert.equal(t.admit('new'), true);
  assert.deepEqual(closedByTable, []);
});

test('drain closes every connection without a request in flight at once, the others when answered, and admits none', () => {
  const { t, closedByTable } = table(10);
  for (const c of ['silent', 'busy', 'idle', 'piped']) t.admit(c);
  t.started('idle');
  t.finished('idle');
  t.started('busy');
  t.started('piped');
  t.started('piped');
  t.drain();
  assert.equal(t.isDraining, true);
  assert.deepEqual(closedByTable.sort(), ['idle', 'silent']);
  assert.equal(t.admit('late'), false);
  t.finished('busy');
  assert.deepEqual(closedByTable.slice(2), ['busy']);
  t.finished('piped');
  assert.deepEqual(closedByTable.slice(3), [], 'one of its requests is still in flight');
  t.finished('piped');
  assert.deepEqual(closedByTable.slice(3), ['piped']);
  assert.equal(t.size, 0);
});

test('at the cap the one whose latest request began longest ago goes first, whenever its answer was sent', () => {
  const { t, closedByTable } = table(2);
  t.admit('slow');
  t.admit('quick');
  t.started('slow');
  t.started('quick');
  t.finished('quick');
  t.finished('slow');
  assert.equal(t.admit('new'), true);
  assert.deepEqual(closedByTable, ['slow']);
});

test('a long request in flight at the oldest end is passed over, not waited for', () => {
  const { t, closedByTable } = table(3);
  t.admit('export');
  t.started('export');
  t.admit('silent');
  t.admit('idle');
  t.started('idle');
  t.finished('idle');
  assert.equal(t.admit('new'), true);
  assert.deepEqual(closedByTable, ['silent']);
  assert.equal(t.admit('newer'), true);
  assert.deepEqual(closedByTable, ['silent', 'idle']);
  assert.equal(t.inFlight, 1);
});

test('draining, a request pipelined behind the one in flight is answered before its connection closes', () => {
  const { t, closedByTable } = table(2);
  t.admit('busy');
  t.started('busy');
  t.drain();
  assert.deepEqual(closedByTable, []);
  t.started('busy');
  t.finished('busy');
  assert.deepEqual(closedByTable, [], 'the pipelined one is still in flight');
  t.finished('busy');
  assert.deepEqual(closedByTable, ['busy']);
  assert.equal(t.size, 0);
});

test('on a real server the table keeps no response alive: an idle kept-alive connection does not hold its last one', async (t) => {
  // A response kept until the connection's next request keeps its request too; at load that made
  // the young generation grow fourfold (docs/performance.md).
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const server = createServer();
  const tracked = trackConnections(server, 10);
  let collected = false;
  const registry = new FinalizationRegistry(() => (collected = true));
  tracked.serve((_req, res) => {
    registry.register(res, 'response');
    res.end('ok');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const agent = new Agent({ keepAlive: true });
  t.after(() => {
    agent.destroy();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  const body = await new Promise<string>((done, fail) => {
    get({ port, host: '127.0.0.1', path: '/', agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => done(text));
    }).on('error', fail);
  });
  assert.equal(body, 'ok');
  // Past the response's 'close' (the next tick after it is sent), the connection idle and open.
  await setTimeout(50);
  assert.equal(tracked.table.size, 1, 'the kept-alive connection is still open');
  assert.equal(tracked.table.inFlight, 0);
  for (let i = 0; i < 20 && !collected; i++) {
    gc();
    await setTimeout(10);
  }
  assert.equal(collected, true, 'the sent response was collected while its connection stays open');
});

test('closeWhere: one look at every open connection with whether it is busy; the picked ones are closed and leave the table', () => {
  const { t, closedByTable } = table(10);
  for (const name of ['a', 'b', 'c', 'd', 'e']) t.admit(name);
  t.started('b');
  t.started('d');
  t.finished('d');
  assert.deepEqual([t.served('a'), t.served('b'), t.served('d')], [false, true, true], 'served once it started a request');
  // Several picked, the last among them: each place is refilled and every connection seen once.
  const seen = t.closeWhere((name) => name === 'a' || name === 'c' || name === 'e');
  assert.deepEqual(seen, [
    ['a', false],
    ['b', true],
    ['c', false],
    ['d', false],
    ['e', false],
  ]);
  assert.deepEqual(closedByTable.sort(), ['a', 'c', 'e']);
  assert.equal(t.size, 2);
  assert.deepEqual(
    t.closeWhere(() => false),
    [
      ['b', true],
      ['d', false],
    ],
    'the rest stay, once each',
  );
  // A closed connection's late events change nothing.
  t.closed('a');
  assert.equal(t.size, 2);
});

test('trackConnections takes the keep-alive timeout over: no timer of node:http, the timeout still announced, an idle connection closed after it', async (t) => {
  const server = createServer({ keepAliveTimeout: 1500 });
  const tracked = trackConnections(server, 10);
  assert.equal(server.keepAliveTimeout, 0, 'node:http arms no timer per request');
  tracked.serve((_req, res) => res.end('ok'));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.after(() => server.close());
  // A raw client: node's own Agent would act on the announced timeout itself.
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  t.after(() => socket.destroy());
  let text = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
  const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now())));
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  while (!text.endsWith('ok')) await setTimeout(5);
  const answered = Date.now();
  assert.match(text, /\r\nKeep-Alive: timeout=1\r\n/, 'announced as node:http would announce 1,500 ms');
  const idle = (await closed) - answered;
  assert.ok(idle >= 1500 && idle <= 1500 + 1000 + 2 * 150 + 1500, `closed after ${idle} ms idle`);
  assert.equal(tracked.table.size, 0);
});
