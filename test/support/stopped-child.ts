/**
 * A crash at a chosen step of the log store: a child process runs a test's module script, which
 * imports the store, its file layer and the logger from the bundle it is given first (`argv[1]`,
 * `log-store-modules.ts`), then the test's own arguments; once it prints "stopped" (and waits
 * there), it is killed with SIGKILL. Resolves with how it ended and what it printed.
 */
import { spawn } from 'node:child_process';
import { bundled } from './server-entry.ts';

export function runUntilStopped(script: string, args: string[]): Promise<{ how: string; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, bundled('test/support/log-store-modules.ts', 'mjs'), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('stopped')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ how: signal ?? `exit ${code}`, out }));
  });
}
