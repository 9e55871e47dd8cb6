/**
 * buildah as the image test drives it: every call on a storage of its own (so the stand-in base
 * image never shadows a real `node:24-bookworm-slim` in the user's own storage), with
 * `--isolation chroot`, the one isolation that needs no OCI runtime.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * Kept between runs: the stand-in base image is made once per machine. Per user, since buildah's
 * storage belongs to whoever made it.
 */
export const STORAGE = join(tmpdir(), `url-shortener-image-test-${process.getuid?.() ?? 0}`);
const GLOBAL = ['--root', join(STORAGE, 'root'), '--runroot', join(STORAGE, 'run')];

/** `buildah ARGS…`: its stdout; a failure throws with its stderr. */
export async function buildah(args: readonly string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  const { stdout } = await exec('buildah', [...GLOBAL, ...args], {
    cwd: options.cwd,
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** Whether an image with this name exists in the test's storage. */
export async function imageExists(name: string): Promise<boolean> {
  try {
    await buildah(['inspect', '--type', 'image', name]);
    return true;
  } catch {
    return false;
  }
}

/** The Docker-format configuration of an image: what `docker inspect` would show under Config. */
export interface ImageConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  WorkingDir?: string;
  Volumes?: Record<string, unknown> | null;
  ExposedPorts?: Record<string, unknown> | null;
  Healthcheck?: { Test: string[]; Interval?: number; Timeout?: number; StartPeriod?: number; Retries?: number };
  StopSignal?: string;
  Labels?: Record<string, string> | null;
}

export async function imageConfig(name: string): Promise<ImageConfig> {
  const inspected = JSON.parse(await buildah(['inspect', '--type', 'image', name])) as { Docker: { config: ImageConfig } };
  return inspected.Docker.config;
}

/**
 * The image's layers, each by digest with its size in bytes, uncompressed (as the manifest of the
 * local storage lists them). Exact, where `buildah images` rounds to three digits ("288 MB").
 */
export async function imageLayers(name: string): Promise<{ digest: string; size: number }[]> {
  const inspected = JSON.parse(await buildah(['inspect', '--type', 'image', name])) as { Manifest: string };
  return (JSON.parse(inspected.Manifest) as { layers: { digest: string; size: number }[] }).layers.map(({ digest, size }) => ({ digest, size }));
}

/**
 * `buildah run` in `container` with the host's network, without waiting: the child is buildah,
 * whose exit code is the command's.
 */
export function runIn(
  container: string,
  command: readonly string[],
  options: { env?: Record<string, string>; volumes?: readonly string[] } = {},
): ChildProcess {
  const args = [...GLOBAL, 'run', '--isolation', 'chroot', '--network', 'host'];
  for (const [k, v] of Object.entries(options.env ?? {})) args.push('--env', `${k}=${v}`);
  for (const v of options.volumes ?? []) args.push('--volume', v);
  return spawn('buildah', [...args, container, '--', ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `buildah run` to the end: exit code and output. */
export function runToEnd(
  container: string,
  command: readonly string[],
  options: Parameters<typeof runIn>[2] = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const child = runIn(container, command, options);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

/**
 * The process running `program` (the name its command line starts with) below `root` in the process
 * tree (buildah runs the command two processes further down, as the image's user): its PID and its
 * real uid. By the command line, not the name the kernel shows: Node 24 names its main thread
 * `MainThread`, where Node 20 left it `node`.
 */
export function descendant(root: number, program: string): { pid: number; uid: number } | undefined {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so split at the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const runs = (pid: number): boolean => {
    try {
      return basename(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!) === program;
    } catch {
      return false; // gone meanwhile
    }
  };
  for (const queue = [root]; queue.length > 0; ) {
    for (const pid of children.get(queue.shift()!) ?? []) {
      if (runs(pid)) {
        const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        return { pid, uid: Number(uid![1]) };
      }
      queue.push(pid);
    }
  }
  return undefined;
}
