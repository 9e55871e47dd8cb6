/**
 * One instance process of the cluster target (`cluster.ts`): it serves shorteners on one
 * PostgreSQL database each, as the parent asks over IPC. A test file forks three of these once and
 * asks each for a fresh shortener per harness, so a harness costs a database and three opens, not
 * three process start-ups.
 *
 * Each shortener is mounted on a plain node:http server exactly as `start()` mounts it in the test
 * process, with the test's settings. What cannot cross a process boundary arrives another way:
 * the test's clock as a value the parent pushes before each request that reads it, a fixed random
 * source as its source text, the log lines back to the parent over IPC.
 */
import { createServer, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createShortenerAsync, type Shortener, type ShortenerOptions } from '../../src/app.ts';
import type { RandomSource } from '../../src/links/codes.ts';
import { createLogger, type LogLevel } from '../../src/log.ts';

export type InstanceRequest =
  | {
      op: 'open';
      id: number;
      settings: ShortenerOptions;
      serverOptions: ServerOptions;
      /** The test's clock at open, when it has one (then `clock` moves it). */
      now?: number;
      /** The source of a random source that uses nothing outside itself (`(b) => b.fill(0)`). */
      random?: string;
    }
  | { op: 'clock'; id: number; now: number; error?: { name: string; message: string } }
  | { op: 'close'; id: number };

export type InstanceMessage = { reply: number; port?: number; error?: string } | { log: number; line: string };

/** The test's clock as last pushed: a time, or the error it threw (a test of a broken dependency). */
interface Clock {
  now: number;
  error?: { name: string; message: string } | undefined;
}

interface Hosted {
  server: Server;
  shortener: Shortener;
  clock: Clock;
}

const ERRORS: Record<string, ErrorConstructor> = { Error, TypeError, RangeError };

function read(clock: Clock): number {
  if (clock.error) throw new (ERRORS[clock.error.name] ?? Error)(clock.error.message);
  return clock.now;
}

const hosted = new Map<number, Hosted>();

function send(message: InstanceMessage): void {
  process.send!(message);
}

async function open(request: Extract<InstanceRequest, { op: 'open' }>): Promise<number> {
  const { id, settings, serverOptions } = request;
  const clock: Clock = { now: request.now ?? 0 };
  const level: LogLevel = settings.logLevel ?? 'debug';
  const shortener = await createShortenerAsync({
    ...settings,
    logger: createLogger(level, { write: (line: string) => (send({ log: id, line }), true) }),
    ...(request.now === undefined ? {} : { now: () => read(clock) }),
    // Only a closed function: the parent refuses one that captures anything.
    ...(request.random === undefined ? {} : { random: new Function(`return (${request.random})`)() as RandomSource }),
  });
  const server = createServer(serverOptions, shortener.handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hosted.set(id, { server, shortener, clock });
  return (server.address() as AddressInfo).port;
}

async function close(id: number): Promise<void> {
  const host = hosted.get(id);
  if (!host) return;
  hosted.delete(id);
  await new Promise<void>((resolve) => {
    host.server.close(() => resolve());
    host.server.closeAllConnections();
  });
  await host.shortener.close();
}

process.on('message', (message: InstanceRequest & { seq: number }) => {
  const done = (port?: number): void => send({ reply: message.seq, ...(port === undefined ? {} : { port }) });
  const failed = (err: unknown): void => send({ reply: message.seq, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  if (message.op === 'open') open(message).then(done, failed);
  else if (message.op === 'close') close(message.id).then(() => done(), failed);
  else {
    const host = hosted.get(message.id);
    if (host) {
      host.clock.now = message.now;
      host.clock.error = message.error;
    }
    done();
  }
});

// The parent going away (a test file that ended or crashed) ends this process too.
process.on('disconnect', () => {
  void Promise.all([...hosted.keys()].map(close)).finally(() => process.exit(0));
});
