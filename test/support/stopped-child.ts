/**
 * A crash at a chosen step of the log store: a child process runs a test's module script, which
 * imports the store, its file layer and the logger from the paths it is given first (`argv[1..3]`),
 * then the test's own arguments; once it prints "stopped" (and waits there), it is killed with
 * SIGKILL. Resolves with how it ended and what it printed.
 */
import { spawn } from 'node:child_process';
import { TS_IMPORT } from './ts-import.ts';

const src = (p: string) => new URL(`../../src/${p}`, import.meta.url).href;

export function runUntilStopped(script: string, args: string[]): Promise<{ how: string; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...TS_IMPORT, '--input-type=module', '-e', script, src('store/log/log-engine.ts'), src('store/log/fs.ts'), src('log.ts'), ...args],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('stopped')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ how: signal ?? `exit ${code}`, out }));
  });
}
