/**
 * compose.yaml and the files beside it, read as compose reads them: every environment name of the
 * project's services is a setting of the table (a typo would be ignored silently by the server),
 * every literal value or `${VAR:-default}` default is one the setting accepts, and the two profiles
 * have the shape the file's comment promises. And the rules of docs/deploy.md: the single instance
 * is published on loopback only unless told otherwise, `POSTGRES_PASSWORD` is required with a
 * message saying what to set, and the deploy page says why the images are not pinned by digest,
 * how to pin them, and that `TRUST_PROXY` trusts every container of the compose network. The image itself is built and run by
 * test-container/image.test.ts (`npm run test:container`, slow, its own CI step).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { TABLE } from '../../src/config/settings.ts';
import { missingTool } from '../support/missing-tool.ts';
import { ROOT } from '../support/helpers.ts';

interface Service {
  build?: unknown;
  image?: string;
  profiles?: string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  volumes?: string[];
  ports?: string[];
  stop_grace_period?: string;
}

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const compose = parse(read('compose.yaml')) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = Object.entries(compose.services);
/** The services that run this project's image: built from the Containerfile beside the file. */
const ours = services.filter(([, s]) => s.build === '.');
const inProfile = (profile: string) => services.filter(([, s]) => s.profiles?.includes(profile));

/** `environment` as compose accepts it, a map or a list of NAME=value. */
function environment(service: Service): Map<string, string | undefined> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return new Map(env.map((e) => [e.split('=')[0]!, e.includes('=') ? e.slice(e.indexOf('=') + 1) : undefined]));
  return new Map(Object.entries(env).map(([k, v]) => [k, v === null ? undefined : String(v)]));
}

/** A value a required variable (`${X:?message}`) stands for: compose refuses to run without one. */
const REQUIRED = 'Required1';

/** A value with compose's interpolation resolved as when no optional variable is set: `${X:-d}` is d, `${X:?m}` is `REQUIRED`. */
function unset(value: string): string {
  return value.replace(/\$\{[A-Z_]+:?\?[^}]*\}/g, REQUIRED).replace(/\$\{[A-Z_]+(?::?-([^}]*))?\}/g, (_, fallback: string | undefined) => fallback ?? '');
}

test('every environment name of the services running the image is a setting, with a value it accepts', () => {
  assert.ok(ours.length >= 4, 'the single instance and the three of the cluster');
  const byEnv = new Map(TABLE.map((s) => [s.env, s]));
  for (const [name, service] of ours) {
    for (const [key, value] of environment(service)) {
      const setting = byEnv.get(key);
      assert.ok(setting, `${name}: ${key} is no setting (${[...byEnv.keys()].join(', ')})`);
      if (value === undefined) continue;
      const resolved = unset(value);
      // An empty value is the setting unset for the secrets; the others must parse.
      if (resolved === '' && setting.secret) continue;
      assert.doesNotThrow(() => setting.parse(resolved), `${name}: ${key}=${resolved}`);
    }
  }
});

test('two profiles: the log store alone, and three instances over PostgreSQL behind Caddy', () => {
  assert.deepEqual([...new Set(services.flatMap(([, s]) => s.profiles ?? []))].sort(), ['cluster', 'single']);
  assert.ok(
    services.every(([, s]) => (s.profiles ?? []).length === 1),
    'each service in one profile',
  );

  const single = inProfile('single');
  assert.deepEqual(
    single.map(([n]) => n),
    ['shortener'],
  );
  const [, alone] = single[0]!;
  assert.equal(environment(alone).get('DATABASE_URL'), undefined);
  assert.ok(
    alone.volumes?.some((v) => /^[a-z]+:\/data$/.test(v)),
    "a named volume on the image's /data",
  );
  assert.ok(
    alone.ports?.some((p) => p.endsWith(':3000')),
    "the image's port published",
  );

  const cluster = inProfile('cluster');
  const instances = cluster.filter(([, s]) => s.build === '.');
  assert.equal(instances.length, 3);
  for (const [name, s] of instances) {
    const env = environment(s);
    assert.match(env.get('DATABASE_URL') ?? '', /^postgres:\/\/[^@]+@postgres:5432\//, name);
    assert.equal(env.get('TRUST_PROXY'), '1', `${name}: Caddy adds one X-Forwarded-For entry`);
    assert.match(env.get('BASE_URL') ?? '', /^https:\/\//, `${name}: Caddy serves https`);
  }
  assert.match(compose.services['postgres']?.image ?? '', /^postgres:/);
  assert.match(compose.services['caddy']?.image ?? '', /^caddy:/);
  assert.ok(compose.services['caddy']!.volumes!.includes('./contrib/compose/Caddyfile:/etc/caddy/Caddyfile:ro'));

  // Stopping gives requests in flight the server's shutdown timeout, and more.
  const shutdownMs = TABLE.find((s) => s.env === 'SHUTDOWN_TIMEOUT_MS')!.default as number;
  for (const [name, s] of ours) assert.ok(Number.parseInt(s.stop_grace_period ?? '10', 10) * 1000 > shutdownMs, name);
  // Every named volume a service mounts is declared.
  for (const [name, s] of services) {
    for (const v of s.volumes ?? []) {
      const source = v.split(':')[0]!;
      if (!source.startsWith('.')) assert.ok(source in compose.volumes, `${name}: volume ${source}`);
    }
  }
});

test("the Caddyfile balances over exactly the cluster's instances, checking their readiness", (t) => {
  const caddyfile = read('contrib/compose/Caddyfile');
  const instances = inProfile('cluster')
    .filter(([, s]) => s.build === '.')
    .map(([n]) => `${n}:3000`);
  const upstreams = (/reverse_proxy ([^{\n]+)\{/.exec(caddyfile)?.[1] ?? '').trim().split(/\s+/);
  assert.deepEqual(upstreams, instances);
  let caddy: string;
  try {
    caddy = execFileSync('sh', ['-c', 'command -v caddy'], { encoding: 'utf8' }).trim();
  } catch {
    t.skip(missingTool('THE CADDYFILE CHECK', 'caddy not found (apt-get install caddy): the Caddyfile cannot be adapted'));
    return;
  }
  // Caddy's own parser: a typo in a directive fails here, not on a server.
  const adapted = execFileSync(caddy, ['adapt', '--adapter', 'caddyfile', '--config', join(ROOT, 'contrib/compose/Caddyfile')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const json = JSON.stringify(JSON.parse(adapted));
  for (const upstream of instances) assert.ok(json.includes(`{"dial":"${upstream}"}`), upstream);
  assert.ok(json.includes('"uri":"/healthz?ready"'), 'active health checks on readiness');
});

test('Dockerfile and .dockerignore are the Containerfile and its ignore file, and its labels say the package version and licence', () => {
  assert.equal(read('Dockerfile'), read('Containerfile'));
  assert.equal(read('.dockerignore'), read('.containerignore'));
  assert.ok(lstatSync(join(ROOT, 'Dockerfile')).isSymbolicLink(), 'a link, so that the two cannot drift');
  const pkg = JSON.parse(read('package.json')) as { version: string; license: string };
  const containerfile = read('Containerfile');
  assert.match(containerfile, new RegExp(`org\\.opencontainers\\.image\\.version="${pkg.version.replace(/\./g, '\\.')}"`));
  assert.match(containerfile, new RegExp(`org\\.opencontainers\\.image\\.licenses="${pkg.license}"`));
  assert.match(read('compose.yaml'), new RegExp(`image: url-shortener:${pkg.version.replace(/\./g, '\\.')}\\n`));
  // The stand-in's CA trick never leaks into the project's image.
  assert.doesNotMatch(containerfile, /NODE_EXTRA_CA_CERTS/);
});

test("compose.yaml's comments name its YAML as it is: an anchor and its aliases, a merge key only where `<<:` is written", () => {
  const text = read('compose.yaml');
  const comments = text
    .split('\n')
    .filter((line) => line.trimStart().startsWith('#'))
    .join('\n');
  // An anchor (`&x`) repeated by aliases (`*x`) is not a merge key (`<<: *x`), which merges a mapping into another.
  if (!/^\s*<<:/m.test(text)) assert.doesNotMatch(comments, /merge key/i);
  assert.match(text, /^x-instance: &instance$/m);
  assert.equal([...text.matchAll(/: \*instance$/gm)].length, 3);
  assert.match(comments, /anchor/);
  assert.match(comments, /alias/);
  // The aliases are the anchored mapping itself: each instance has every setting of it.
  const [first, ...others] = inProfile('cluster').filter(([, s]) => s.build === '.');
  for (const [name, s] of others) assert.deepEqual(s, first![1], name);
});

test('the single instance is published on 127.0.0.1 unless PUBLISH_ADDRESS says otherwise', () => {
  const ports = compose.services['shortener']!.ports ?? [];
  // biome-ignore lint/suspicious/noTemplateCurlyInString: compose.yaml's own interpolation, read as written
  assert.deepEqual(ports, ['${PUBLISH_ADDRESS:-127.0.0.1}:3000:3000']);
  assert.deepEqual(ports.map(unset), ['127.0.0.1:3000:3000']);
  // No service of the single profile publishes a port on every interface by default.
  for (const [name, s] of inProfile('single')) {
    for (const p of s.ports ?? []) assert.match(unset(p), /^127\.0\.0\.1:\d+:\d+$/, `${name}: ${p}`);
  }
  assert.match(read('docs/deploy.md'), /`PUBLISH_ADDRESS=0\.0\.0\.0`/);
});

test('POSTGRES_PASSWORD is required wherever it is used, with a message saying what to set', () => {
  const text = read('compose.yaml');
  const uses = [...text.matchAll(/\$\{POSTGRES_PASSWORD([^}]*)\}/g)].map((m) => m[1]!);
  assert.equal(uses.length, 2, "the database and the instances' DATABASE_URL");
  for (const use of uses) assert.match(use, /^:\?set POSTGRES_PASSWORD in the shell or \.env: /);
  assert.equal(unset(environment(compose.services['postgres']!).get('POSTGRES_PASSWORD') ?? ''), REQUIRED);
});

test('deploy.md says why the images are named by tag and how to pin them, and whom TRUST_PROXY trusts', () => {
  const deploy = read('docs/deploy.md');
  const images = [
    ...services.filter(([, s]) => s.build === undefined).map(([, s]) => s.image!),
    ...[...read('Containerfile').matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!),
  ];
  for (const image of new Set(images)) {
    // A digest pins it; a tag must be one the deploy page names, beside how to pin it.
    if (/@sha256:[0-9a-f]{64}$/.test(image)) continue;
    assert.ok(deploy.includes(`\`${image}\``), `${image} is named in docs/deploy.md`);
  }
  assert.match(deploy, /\*\*The images are named by tag, not by digest\*\*/);
  assert.match(deploy, /image: postgres:16-bookworm@sha256:<digest>/);
  assert.match(deploy, /\*\*`TRUST_PROXY=1` in the cluster trusts every container on the compose network\*\*/);
  assert.match(read('compose.yaml'), /every container on the compose network/);
});
