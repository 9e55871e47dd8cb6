/**
 * The container image, built from the unchanged Containerfile and run for real with buildah
 * (`--isolation chroot`: these machines cannot start containers through an OCI runtime). Slow (a
 * build runs `npm ci`), so it is not part of `npm test`: `npm run test:container`, its own step in
 * `.ci/run`. The base image comes from the registry where there is one; here, from a local stand-in
 * (stand-in-base.ts). Under CI a missing buildah or mmdebstrap fails the file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { ROOT, request, tempDir } from '../test/support/helpers.ts';
import { missingTool } from '../test/support/missing-tool.ts';
import { pgServer } from '../test/support/pg.ts';
import { buildah, descendant, imageConfig, imageLayers, runIn, runToEnd, type ImageConfig } from './buildah.ts';
import { BASE_IMAGE, containerfileBase, ensureStandInBase } from './stand-in-base.ts';

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  devDependencies: Record<string, string>;
};
const LOCK = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
const TAG = `localhost/url-shortener:image-test-${process.pid}`;
/** The image user's uid: `node` in the official base image. */
const NODE_UID = 1000;
/**
 * What the image may add to its base: dist/ (about 5 MB), static/, schemas/, the PostgreSQL
 * driver. The smallest of the build's own tools (esbuild, 12 MB) would not fit.
 */
const OWN_LAYERS_MAX_BYTES = 10e6;

function onPath(tool: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const missing = ['buildah', 'mmdebstrap'].filter((tool) => !onPath(tool));
const skip = missing.length > 0 ? missingTool('THE CONTAINER IMAGE TEST', `${missing.join(' and ')} not found (apt-get install buildah mmdebstrap)`) : false;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Every file and folder below `dir`, relative to it, folders with a trailing slash. */
function tree(dir: string, under = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? [`${relative(under, path)}/`, ...tree(path, under)] : [relative(under, path)];
  });
}

/** The same listing of `/app` inside `container`, by the image's own Node. */
const LIST_APP = `
const { readdirSync, statSync } = require('node:fs');
const walk = (d, p) => readdirSync(d).flatMap((n) => statSync(d + '/' + n).isDirectory() ? [p + n + '/', ...walk(d + '/' + n, p + n + '/')] : [p + n]);
process.stdout.write(JSON.stringify(walk('/app', '')));`;

let config: ImageConfig;
/** The bytes of the image's layers: all of them, and those its base does not have. */
let size: { total: number; own: number };
const containers: string[] = [];

/** A working container of the image, named for this run; removed when the file ends. */
async function container(): Promise<string> {
  const name = `url-shortener-image-test-${process.pid}-${containers.length}`;
  await buildah(['from', '--pull=never', '--name', name, TAG]);
  containers.push(name);
  return name;
}

/**
 * The image's own command (ENTRYPOINT and CMD) in a new working container, with `dataDir`
 * mounted on the image's volume. buildah 1.28 mounts a declared volume of its own over a `--volume`
 * at the same path, where `docker run -v` replaces it: the working container (not the image) drops
 * the declaration first.
 */
async function runImage(env: Record<string, string>, dataDir?: string) {
  const name = await container();
  const volumes: string[] = [];
  if (dataDir !== undefined) {
    await buildah(['config', '--volume', '/data-', name]);
    volumes.push(`${dataDir}:/data`);
  }
  const child = runIn(name, [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])], { env, volumes });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const port = Number(env['PORT']);
  for (const deadline = Date.now() + 60_000; ; ) {
    const ready = await request(port, '/healthz?ready').catch(() => undefined);
    if (ready?.status === 200) break;
    if (child.exitCode !== null || Date.now() > deadline) assert.fail(`the image's command never became ready:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const node = descendant(child.pid!, 'node');
  assert.ok(node, 'the node process runs below buildah');
  return { name, node, exited, output: () => out };
}

describe('the container image', { skip, timeout: 30 * 60_000 }, () => {
  before(async () => {
    const base = await ensureStandInBase();
    const started = Date.now();
    await buildah(['bud', '--isolation', 'chroot', '--pull=never', '--format', 'docker', '--file', 'Containerfile', '--tag', TAG, '.'], {
      cwd: ROOT,
      timeoutMs: 20 * 60_000,
    });
    config = await imageConfig(TAG);
    const layers = await imageLayers(TAG);
    const baseLayers = new Set((await imageLayers(BASE_IMAGE)).map((l) => l.digest));
    const sum = (list: { size: number }[]): number => list.reduce((n, l) => n + l.size, 0);
    size = { total: sum(layers), own: sum(layers.filter((l) => !baseLayers.has(l.digest))) };
    const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
    process.stderr.write(
      `image test: ${base}; built ${TAG} in ${((Date.now() - started) / 1000).toFixed(0)} s: ${mb(size.total)}, of which ${mb(size.own)} over the base\n`,
    );
  });

  after(async () => {
    for (const name of containers) await buildah(['rm', name]).catch(() => undefined);
    await buildah(['rmi', TAG]).catch(() => undefined);
  });

  test('is configured as a container should be: unprivileged, HOST=0.0.0.0, a volume, a readiness check, SIGTERM, the labels', () => {
    assert.equal(config.User, 'node');
    assert.ok(config.Env?.includes('HOST=0.0.0.0'), String(config.Env));
    assert.ok(config.Env?.includes('DATA_DIR=/data'), String(config.Env));
    assert.deepEqual(Object.keys(config.Volumes ?? {}), ['/data']);
    assert.deepEqual(config.Entrypoint, ['node', 'dist/server.js']);
    assert.equal(config.StopSignal, 'SIGTERM');
    // The Docker format keeps HEALTHCHECK (the OCI format drops it): it asks the readiness probe.
    assert.equal(config.Healthcheck?.Test[0], 'CMD');
    assert.match(config.Healthcheck!.Test.join(' '), /\/healthz\?ready/);
    assert.equal(config.Labels?.['org.opencontainers.image.version'], PACKAGE.version);
    assert.equal(config.Labels?.['org.opencontainers.image.licenses'], PACKAGE.license);
    assert.ok('org.opencontainers.image.source' in (config.Labels ?? {}), 'a source label');
  });

  test(`runs the Node of its base (${containerfileBase().image}) and adds under ${OWN_LAYERS_MAX_BYTES / 1e6} MB to it`, async () => {
    const version = await runToEnd(await container(), ['node', '--version']);
    assert.equal(version.code, 0, version.err);
    assert.match(version.out, new RegExp(`^v${containerfileBase().nodeMajor}\\.`));
    assert.ok(size.own > 0 && size.own < OWN_LAYERS_MAX_BYTES, `the image's own layers hold ${size.own} bytes`);
  });

  test('npm inside it sees the production tree only: the package and the PostgreSQL driver, nothing else', async () => {
    const name = await container();
    const driver = `postgres@${LOCK.packages['node_modules/postgres']!.version}`;
    // --omit=dev: what npm counts as the production tree. The driver is an optional peer dependency
    // copied in rather than installed, which npm reports as extraneous (and still exits 0); any
    // other package there, or a broken one (npm's exit 1), is a fault of the image.
    const production = await runToEnd(name, ['npm', 'ls', '--omit=dev', '--all', '--json']);
    assert.equal(production.code, 0, production.out + production.err);
    const tree = JSON.parse(production.out) as { name: string; problems?: string[]; dependencies?: Record<string, { version: string }> };
    assert.equal(tree.name, PACKAGE.name);
    assert.deepEqual(Object.keys(tree.dependencies ?? {}), ['postgres']);
    assert.equal(`postgres@${tree.dependencies!['postgres']!.version}`, driver);
    assert.deepEqual(
      (tree.problems ?? []).filter((p) => p !== `extraneous: ${driver} /app/node_modules/postgres`),
      [],
    );
    // Without --omit: every package on disk, dev or not. The same one.
    const all = await runToEnd(name, ['npm', 'ls', '--all', '--parseable']);
    assert.equal(all.code, 0, all.out + all.err);
    assert.deepEqual(all.out.trim().split('\n'), ['/app', '/app/node_modules/postgres']);
  });

  test('holds dist/, static/, schemas/, the production package.json and the PostgreSQL driver: no dev dependency, no test file', async () => {
    const listed = await runToEnd(await container(), ['node', '-e', LIST_APP]);
    assert.equal(listed.code, 0, listed.err);
    const files = JSON.parse(listed.out) as string[];
    assert.deepEqual(files.filter((f) => !f.slice(0, -1).includes('/')).sort(), ['dist/', 'node_modules/', 'package.json', 'schemas/', 'static/']);
    // The driver the server imports only with DATABASE_URL (an optional peer dependency, no
    // dependencies of its own), at the version of the lock file; no other package.
    assert.deepEqual(
      files.filter((f) => /^node_modules\/[^/]+\/$/.test(f)),
      ['node_modules/postgres/'],
    );
    const driver = await runToEnd(containers.at(-1)!, ['cat', 'node_modules/postgres/package.json']);
    assert.equal((JSON.parse(driver.out) as { version: string }).version, LOCK.packages['node_modules/postgres']!.version);
    for (const dev of Object.keys(PACKAGE.devDependencies).filter((d) => d !== 'postgres')) {
      assert.ok(!files.some((f) => f.startsWith(`node_modules/${dev}/`)), `dev dependency ${dev} in the image`);
    }
    assert.deepEqual(
      files.filter((f) => /(^|\/)(test|tests|__tests__|src)\/|\.test\.|\.spec\.|\.ts$/.test(f) && !f.endsWith('.d.ts') && !f.startsWith('node_modules/')),
      [],
    );
    assert.deepEqual(
      files.filter((f) => f.startsWith('static/') && f !== 'static/').sort(),
      tree(join(ROOT, 'static'))
        .map((f) => `static/${f}`)
        .sort(),
    );
    assert.deepEqual(
      files.filter((f) => f.startsWith('schemas/') && f !== 'schemas/').sort(),
      tree(join(ROOT, 'schemas'))
        .map((f) => `schemas/${f}`)
        .sort(),
    );
    assert.ok(files.includes('dist/server.js') && files.includes('dist/lib/index.js'), 'the server and the library');
    const pkg = await runToEnd(containers.at(-1)!, ['cat', 'package.json']);
    const shipped = JSON.parse(pkg.out) as Record<string, unknown>;
    assert.equal(shipped['name'], PACKAGE.name);
    assert.equal(shipped['version'], PACKAGE.version);
    assert.equal(shipped['devDependencies'], undefined);
    assert.equal(shipped['scripts'], undefined);
    const du = await runToEnd(containers.at(-1)!, ['du', '-sb', '/app']);
    process.stderr.write(`image test: /app holds ${(Number(du.out.split('\t')[0]) / 1e6).toFixed(1)} MB\n`);
  });

  test('its own command serves as a non-root user, stops on SIGTERM within a second with 0, and keeps the data in the volume', async (t) => {
    const dataDir = tempDir(t, 'image-test-data-');
    // A host directory on the volume must be writable by the image's user (a named volume copies
    // the image's /data, owner included).
    chownSync(dataDir, NODE_UID, NODE_UID);
    const port = await freePort();
    const first = await runImage({ PORT: String(port) }, dataDir);
    assert.notEqual(first.node.uid, 0);
    assert.equal(first.node.uid, NODE_UID);
    assert.match(first.output(), new RegExp(`"msg":"listening","url":"http://0\\.0\\.0\\.0:${port}"`));

    const target = `https://example.com/from-the-image/${process.pid}`;
    const created = await request(port, '/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: target }),
    });
    assert.equal(created.status, 201, created.body);
    const code = created.body.trim().slice(created.body.trim().lastIndexOf('/') + 1);
    const followed = await request(port, `/${code}`);
    assert.equal(followed.status, 302);
    assert.equal(followed.headers.location, target);

    // The image's HEALTHCHECK command, run as the runtime would: in the container, beside the server.
    const check = config.Healthcheck!.Test.slice(1);
    const healthy = await runToEnd(first.name, check, { env: { PORT: String(port) } });
    assert.equal(healthy.code, 0, healthy.err);

    const sent = performance.now();
    process.kill(first.node.pid, 'SIGTERM');
    const code0 = await first.exited;
    const took = performance.now() - sent;
    assert.equal(code0, 0, first.output());
    assert.ok(took < 1000, `SIGTERM to exit took ${took.toFixed(0)} ms`);
    assert.match(first.output(), /"msg":"stopped","records":1/);
    const unhealthy = await runToEnd(first.name, check, { env: { PORT: String(port) } });
    assert.notEqual(unhealthy.code, 0, 'the health check fails with no server');

    // The log is on the volume, owned by the image's user, and a new container serves it.
    assert.equal(statSync(join(dataDir, 'urls.log')).uid, NODE_UID);
    const second = await runImage({ PORT: String(port) }, dataDir);
    const again = await request(port, `/${code}`);
    assert.equal(again.status, 302);
    assert.equal(again.headers.location, target);
    process.kill(second.node.pid, 'SIGTERM');
    assert.equal(await second.exited, 0, second.output());
  });

  test("serves over PostgreSQL with the driver it ships (the compose file's cluster profile)", async (t) => {
    const pg = await pgServer(t);
    if (!pg) return;
    const databaseUrl = await pg.createDatabase();
    const port = await freePort();
    const run = await runImage({ PORT: String(port), DATABASE_URL: databaseUrl });
    assert.match(run.output(), /"database":"t\d+_\d+"/);
    const target = `https://example.com/over-postgres/${process.pid}`;
    const created = await request(port, '/api/shorten', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: target }),
    });
    assert.equal(created.status, 201, created.body);
    const code = created.body.trim().slice(created.body.trim().lastIndexOf('/') + 1);
    // The link is a row of the database, not a file in the container.
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => undefined });
    t.after(() => sql.end({ timeout: 1 }));
    const rows = await sql<{ url: string }[]>`SELECT url FROM links WHERE code = ${code}`;
    assert.deepEqual(
      rows.map((r) => r.url),
      [target],
    );
    const followed = await request(port, `/${code}`);
    assert.equal(followed.headers.location, target);
    process.kill(run.node.pid, 'SIGTERM');
    assert.equal(await run.exited, 0, run.output());
  });
});
