/**
 * The docs' runnable shell blocks (```` ```sh runnable ```` in README.md and docs/*.md) run as a
 * reader would paste them, each in one bash session against a real server, and print what the
 * docs show (the conventions: test/support/runnable-blocks.ts). A block that starts the server
 * itself (`npm start &`) gets the server from the sources in its place; any other runs against a
 * server this test started with the defaults. Every command must exit 0.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { ROOT, serverProcess, tempDir } from '../support/helpers.ts';
import { missingTool } from '../support/missing-tool.ts';
import { DOC_ORIGIN, matchOutput, runnableBlocks, substitute, type Block } from '../support/runnable-blocks.ts';
import { serverBundle } from '../support/server-entry.ts';

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];
const BLOCKS = PAGES.flatMap((page) => runnableBlocks(page, readFileSync(join(ROOT, page), 'utf8')));

/** The server of `npm start`, bundled from the sources (`server-entry.ts`), its log kept out of the block's output. */
const SERVER = `node ${JSON.stringify(serverBundle())} >>server.log 2>&1`;

/** A command as the test runs it: the test's server address and command for the docs' ones. */
function runnable(command: string, origin: string, bound: ReadonlyMap<string, string>): string {
  return substitute(command, bound)
    .replaceAll(DOC_ORIGIN, origin)
    .replace(/\bnpm start(?=\s*&)/, SERVER);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** One bash session: `run` sends a command and resolves with its stdout lines and exit status. */
function session(t: TestContext, cwd: string, env: Record<string, string>): (command: string) => Promise<{ lines: string[]; status: number; stderr: string }> {
  const bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  let waiting: (() => void) | undefined;
  bash.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    waiting?.();
  });
  bash.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  t.after(async () => {
    // The block's background jobs (the server) get SIGTERM as a reader's Ctrl-C would stop them.
    bash.stdin.end('kill $(jobs -p) 2>/dev/null; wait; exit 0\n');
    const exited = new Promise((done) => bash.once('exit', done));
    const timer = setTimeout(() => process.kill(-bash.pid!, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  let n = 0;
  return async (command) => {
    const marker = `@@done-${++n}@@`;
    out = '';
    err = '';
    bash.stdin.write(`{ ${command}\n}\nprintf '\\n${marker} %d\\n' $?\n`);
    const deadline = Date.now() + 20_000;
    while (!out.includes(marker)) {
      assert.ok(Date.now() < deadline, `no end of ${command} within 20 s; stderr: ${err}`);
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 200);
      });
    }
    const [printed, after] = out.split(`\n${marker} `) as [string, string];
    return {
      lines:
        printed === ''
          ? []
          : printed
              .replace(/\n+$/, '')
              .split('\n')
              .map((l) => l.replace(/\r$/, '')),
      status: Number(after.trim()),
      stderr: err,
    };
  };
}

const tools = ['curl', 'openssl'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
const missing =
  tools.length > 0
    ? missingTool('the runnable blocks of the docs', `${tools.join(' and ')} not installed (Debian: apt-get install ${tools.join(' ')})`)
    : undefined;

test("the docs have runnable blocks: the README's first requests and the gated instance of docs/security.md", () => {
  const pages = BLOCKS.map((b) => b.page);
  assert.ok(pages.includes('README.md'));
  assert.ok(pages.includes(join('docs', 'security.md')));
  for (const block of BLOCKS)
    assert.ok(
      block.commands.some((c) => c.shown.length > 0),
      `${block.page}:${block.line} shows some output`,
    );
});

for (const block of BLOCKS) {
  test(`${block.page}:${block.line} runs as shown`, { skip: missing }, async (t) => {
    await runBlock(t, block);
  });
}

async function runBlock(t: TestContext, block: Block): Promise<void> {
  const dir = tempDir(t, 'shortener-docs-');
  mkdirSync(join(dir, 'data'));
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '', HOME: dir, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dir, 'data') };
  const startsServer = block.commands.some((c) => /\bnpm start\s*&/.test(c.text));
  if (!startsServer) {
    const server = await serverProcess(env);
    t.after(async () => {
      await server.stop();
    });
  }
  const run = session(t, dir, env);
  const bound = new Map<string, string>();
  for (const command of block.commands) {
    const where = `${block.page}:${command.line}`;
    const { lines, status, stderr } = await run(runnable(command.text, origin, bound));
    assert.equal(status, 0, `${where}: \`${command.text}\` exits 0; stderr: ${stderr}`);
    const result = matchOutput(command.shown, lines, origin, bound);
    assert.ok(result.ok, `${where}: \`${command.text}\` printed\n${lines.join('\n')}\nwhere the page shows\n${command.shown.join('\n') || '(nothing)'}`);
  }
  rmSync(join(dir, 'server.log'), { force: true });
}
