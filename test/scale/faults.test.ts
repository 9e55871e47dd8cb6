/**
 * Faults of a scaled-out deployment (docs/scale-out.md), three instances on one database behind a
 * round-robin proxy, under a load of concurrent clients:
 *
 * - `kill -9` of one instance in the middle of a create load: every create acknowledged with a
 *   `201` (by any instance, the killed one included) is readable afterwards from the others.
 * - PostgreSQL stopped for a while and started again: meanwhile only `503`
 *   `{"detail":"database unavailable"}` (never a `500`, never a hang: every request is answered
 *   within the 5 s of the contract), readiness `503`, service back by itself within seconds, and
 *   nothing acknowledged lost.
 *
 * The figures (acknowledged, found, 503s, the gap) are written as test diagnostics.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { codeOf, request, type Reply } from '../support/helpers.ts';
import { startInstances, type Instances } from '../support/instances.ts';
import { pgServer } from '../support/pg.ts';

const UNAVAILABLE = '{"detail":"database unavailable"}';
/** The contract's bound on any answer while the database is away, plus a margin for a loaded machine. */
const ANSWER_WITHIN_MS = 6000;

const server = await pgServer(undefined, { own: true });
const skip = server === undefined ? 'PostgreSQL is not installed' : false;

interface Outcome {
  reply?: Reply;
  error?: string;
  ms: number;
}

async function timed(run: () => Promise<Reply>): Promise<Outcome> {
  const started = Date.now();
  try {
    const reply = await run();
    return { reply, ms: Date.now() - started };
  } catch (err) {
    return { error: (err as Error).message, ms: Date.now() - started };
  }
}

/** `clients` loops of creates through the proxy until `stop()`; every outcome is kept with its URL. */
function createLoad(d: Instances, clients: number, tag: string): { acknowledged(): number; stop(): Promise<{ url: string; outcome: Outcome }[]> } {
  let running = true;
  const results: { url: string; outcome: Outcome }[] = [];
  const loops = Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; running; i++) {
      const url = `https://example.com/${tag}/${c}/${i}`;
      const outcome = await timed(() =>
        request(d.proxy.port, '/api/shorten', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) }),
      );
      results.push({ url, outcome });
    }
  });
  return {
    acknowledged: () => results.filter((r) => r.outcome.reply?.status === 201).length,
    async stop() {
      running = false;
      await Promise.all(loops);
      return results;
    },
  };
}

/** Every acknowledged create (`201`) of `results` read back through the proxy: the URLs not found. */
async function missing(d: Instances, results: { url: string; outcome: Outcome }[]): Promise<{ acknowledged: number; lost: string[] }> {
  const acknowledged = results.filter((r) => r.outcome.reply?.status === 201);
  const lost: string[] = [];
  for (const { url, outcome } of acknowledged) {
    const r = await request(d.proxy.port, `/api/urls/${codeOf(outcome.reply!)}`);
    if (r.status !== 200 || (JSON.parse(r.body) as { original_url: string }).original_url !== url) lost.push(url);
  }
  return { acknowledged: acknowledged.length, lost };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves once `reached()` holds, looked at every 20 ms: a count of answers, not a time, on a loaded machine. */
async function until(reached: () => boolean): Promise<void> {
  while (!reached()) await sleep(20);
}

test('kill -9 of an instance during a create load: every acknowledged link is readable from the others', { skip }, async (t) => {
  const d = await startInstances({ after }, { databaseUrl: await server!.createDatabase(), count: 3 });
  const load = createLoad(d, 12, 'kill');
  // The kill comes during a real load, and the load goes on after it: counted in answers, since a
  // second of a loaded machine was once 38 creates.
  await until(() => load.acknowledged() >= 40);
  await d.kill(1);
  const before = load.acknowledged();
  await until(() => load.acknowledged() >= before + 40);
  const results = await load.stop();
  // Only the survivors answer from now on.
  d.proxy.backends = [d.servers[0]!.port, d.servers[2]!.port];
  const { acknowledged, lost } = await missing(d, results);
  const failed = results.length - acknowledged;
  t.diagnostic(
    `kill -9: ${results.length} creates sent, ${acknowledged} acknowledged, ${acknowledged - lost.length} found afterwards, ${failed} not acknowledged (502 or cut)`,
  );
  assert.ok(acknowledged >= 80, `a real load: ${acknowledged} acknowledged`);
  assert.ok(failed > 0, 'the kill happened during the load');
  assert.deepEqual(lost, []);
  for (const { outcome } of results) {
    // Every answer is a 201 or the proxy's 502 for the dead instance, or a connection it cut.
    if (outcome.reply) assert.ok([201, 502].includes(outcome.reply.status), `status ${outcome.reply.status}: ${outcome.reply.body}`);
  }
});

test('PostgreSQL stopped and started under load: only 503s meanwhile, no 500, no hang, back by itself, nothing lost', { skip }, async (t) => {
  const d = await startInstances({ after }, { databaseUrl: await server!.createDatabase(), count: 3 });
  const seed = await request(d.proxy.port, '/api/shorten?url=https%3A%2F%2Fexample.com%2Fseed', { method: 'POST' });
  assert.equal(seed.status, 201);
  const code = codeOf(seed);

  const creates = createLoad(d, 6, 'restart');
  // Reads and redirects alongside the creates, and the readiness probe.
  let reading = true;
  const reads: Outcome[] = [];
  const probes: Outcome[] = [];
  const readers = Array.from({ length: 4 }, async (_, c) => {
    while (reading) {
      reads.push(await timed(() => request(d.proxy.port, c % 2 === 0 ? `/${code}` : `/api/urls/${code}`)));
      if (c === 0) probes.push(await timed(() => request(d.proxy.port, '/healthz?ready')));
    }
  });

  await sleep(800);
  const down = Date.now();
  await server!.stop();
  await sleep(2500);
  await server!.start();
  const up = Date.now();
  // Service is back once a create succeeds again.
  let backAfterMs = -1;
  while (Date.now() - up < 15_000) {
    const r = await request(d.proxy.port, '/api/shorten?url=https%3A%2F%2Fexample.com%2Fback', { method: 'POST' });
    if (r.status === 201) {
      backAfterMs = Date.now() - up;
      break;
    }
    await sleep(100);
  }
  await sleep(500);
  reading = false;
  await Promise.all(readers);
  const results = await creates.stop();

  const all = [...results.map((r) => r.outcome), ...reads, ...probes];
  const errors = all.filter((o) => o.error !== undefined);
  const statuses = new Map<number, number>();
  for (const o of all) if (o.reply) statuses.set(o.reply.status, (statuses.get(o.reply.status) ?? 0) + 1);
  const unavailable = [...results.map((r) => r.outcome), ...reads].filter((o) => o.reply?.status === 503);
  const slowest = Math.max(...all.map((o) => o.ms));
  const { acknowledged, lost } = await missing(d, results);
  t.diagnostic(
    `database away ${up - down} ms; service back ${backAfterMs} ms after the database; answers by status ${JSON.stringify(Object.fromEntries(statuses))}; ` +
      `slowest answer ${slowest} ms; ${acknowledged} creates acknowledged, ${acknowledged - lost.length} found afterwards`,
  );

  // No instance died of the outage (a dead one would show as the proxy's 502s).
  for (const s of d.servers)
    assert.equal(
      s.child.exitCode ?? s.child.signalCode,
      null,
      `an instance exited: ${s.stderr()} ${JSON.stringify(s.lines.filter((l) => l['level'] === 'error'))}`,
    );
  assert.deepEqual(errors, [], 'every request is answered');
  assert.ok(slowest <= ANSWER_WITHIN_MS, `an answer took ${slowest} ms`);
  assert.ok(backAfterMs >= 0, 'service came back by itself');
  assert.ok(unavailable.length > 0, 'the load saw the gap');
  for (const o of unavailable) {
    assert.equal(o.reply!.body, UNAVAILABLE);
    assert.equal(o.reply!.headers['content-type'], 'application/json');
  }
  for (const o of probes.filter((p) => p.reply?.status === 503)) assert.match(o.reply!.body, /^\{"status":"not ready","detail":"[^"]+"\}$/);
  assert.deepEqual(
    [...statuses.keys()].filter((s) => ![200, 201, 302, 503].includes(s)),
    [],
    'no other status, no 500',
  );
  assert.ok(
    probes.some((o) => o.reply?.status === 503),
    'readiness was 503 while the database was away',
  );
  assert.equal(probes.at(-1)!.reply!.status, 200);
  assert.deepEqual(lost, []);
});
