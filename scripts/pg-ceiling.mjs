#!/usr/bin/env node
// The ceiling of the service over PostgreSQL (docs/scale-out.md, `npm run bench`): a minimal
// node:http server that does only the statements a redirect and a create cost in the database, and
// nothing else: no validation, no routing, no gate, no security headers, no metrics.
//
//   GET  /<code>         one conditional UPDATE … RETURNING (synchronous_commit = off), then 302
//   POST /api/shorten    one INSERT … ON CONFLICT DO NOTHING (synchronous_commit = on), then 201
//
// The table is the service's own (`links`, created by its migrations: run the service once on the
// database first), so the statements touch the same rows and indexes. `WORKERS=2` forks two processes on the port with node:cluster, each with its own
// pools of `DB_POOL_SIZE` connections (default 10), as the service does.
//
// Environment: DATABASE_URL (required), PORT (default 0), WORKERS (default 1), DB_POOL_SIZE.
// It prints `port N` once every worker listens.
import cluster from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import postgres from 'postgres';

const WORKERS = Number(process.env.WORKERS ?? 1);
const POOL = Number(process.env.DB_POOL_SIZE ?? 10);
const DATABASE_URL = process.env.DATABASE_URL;
if (!DATABASE_URL) {
  console.error('pg-ceiling: DATABASE_URL is required');
  process.exit(2);
}

if (cluster.isPrimary && WORKERS > 1) {
  let listening = 0;
  cluster.on('listening', (_, address) => {
    if (++listening === WORKERS) console.log(`port ${address.port}`);
  });
  for (let i = 0; i < WORKERS; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers)) w.process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  await serve();
}

async function serve() {
  // Counted visits may lose their last fraction of a second in a database crash; creates may not.
  const visits = postgres(DATABASE_URL, { max: POOL, onnotice: () => {}, connection: { synchronous_commit: 'off' } });
  const writes = postgres(DATABASE_URL, { max: POOL, onnotice: () => {} });
  const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  const code = () => {
    const bytes = randomBytes(8);
    let s = '';
    for (let i = 0; i < 8; i++) s += ALPHABET[bytes[i] % 58];
    return s;
  };

  const server = createServer(async (req, res) => {
    try {
      if (req.method === 'POST') {
        let body = '';
        for await (const chunk of req) body += chunk;
        const { url } = JSON.parse(body);
        const c = code();
        const rows =
          await writes`INSERT INTO links (code, url, created_at, retention_days) VALUES (${c}, ${url}, ${Math.floor(Date.now() / 1000)}, 0) ON CONFLICT DO NOTHING RETURNING code`;
        if (rows.length === 0) return void res.writeHead(409).end();
        res.writeHead(201, { 'Content-Type': 'text/plain' }).end(`http://localhost/${c}`);
        return;
      }
      const c = req.url.slice(1);
      const rows =
        await visits`UPDATE links SET visit_count = visit_count + 1 WHERE code = ${c} AND (max_visits IS NULL OR visit_count < max_visits) RETURNING url`;
      if (rows.length === 0) return void res.writeHead(404).end();
      res.writeHead(302, { Location: rows[0].url, 'Content-Length': '0' }).end();
    } catch (err) {
      res.writeHead(503).end(String(err.message));
    }
  });
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    if (!cluster.isWorker) console.log(`port ${server.address().port}`);
  });
  process.on('SIGTERM', () => {
    server.close();
    void Promise.all([visits.end({ timeout: 1 }), writes.end({ timeout: 1 })]).then(() => process.exit(0));
  });
}
