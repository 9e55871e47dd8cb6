/**
 * `url-shortener webhooks list|create|delete|deliveries` (docs/webhooks.md): the subscriptions of
 * `GET/POST /api/webhooks`, `DELETE /api/webhooks/<id>` and `GET /api/webhooks/<id>/deliveries`,
 * from the command line: a script's way to subscribe a receiver without a server or an admin key,
 * and a way to read why a receiver gets nothing while no admin key is at hand.
 *
 * The service's own `createWebhooks` makes, lists and deletes them, so every rule and every
 * refusal is the routes' (the URL, the events, the domain, the limit of subscriptions). Only the
 * answer goes to stdout, as the route answers it (`create`'s with its secret, this once); the log
 * and the refusals go to stderr, as the keys commands' do. The store is opened as they open it: on
 * the log store the data dir's lock makes them refuse while a server holds it (a subscription
 * written beside a running server would be a line its log never replays); with `--database-url`
 * (or `DATABASE_URL`) they run beside any number of servers, which see a change within a second.
 * Nothing is delivered here: delivery is a server's, which sends what the outbox holds once it runs.
 */
import { ConfigError } from '../errors.ts';
import { commandConfig, readCommandOptions } from './command-options.ts';
import { createDomains } from '../links/domains.ts';
import { createLogger, type Logger } from '../log.ts';
import { createWebhooks, type Failed, type Webhooks } from '../webhooks/subscriptions.ts';
import type { CommandIo } from './transfer-commands.ts';
import { openStore } from './keys-commands.ts';

export type WebhooksAction = 'list' | 'create' | 'delete' | 'deliveries';

export interface WebhooksCommand {
  action: WebhooksAction;
  /** `create --url U --events a,b --domain H`, as given. */
  url?: string;
  events?: string;
  domain?: string;
  /** `delete ID`, `deliveries ID`. */
  id?: string;
  /** The other arguments: settings, read as the server reads them. */
  settings: string[];
}

const ACTIONS: ReadonlySet<string> = new Set(['list', 'create', 'delete', 'deliveries']);
/** The actions that take a subscription's id, right after their name. */
const BY_ID: ReadonlySet<string> = new Set(['delete', 'deliveries']);
/** The options of `create`, and the field each one fills. */
const CREATE_OPTIONS: Readonly<Record<string, 'url' | 'events' | 'domain'>> = { '--url': 'url', '--events': 'events', '--domain': 'domain' };
const USAGE =
  'node dist/server.js webhooks list | webhooks create --url URL --events TYPE[,TYPE...] [--domain HOST] | webhooks delete ID | webhooks deliveries ID';

/** `webhooks …`; undefined when argv is no `webhooks` command. Throws `ConfigError` on bad usage. */
export function parseWebhooksCommand(argv: readonly string[]): WebhooksCommand | undefined {
  const [first, action, ...rest] = argv;
  if (first !== 'webhooks') return undefined;
  if (action === undefined || !ACTIONS.has(action)) throw new ConfigError(`webhooks needs one of list, create, delete, deliveries: ${USAGE}`);
  const parsed: WebhooksCommand = { action: action as WebhooksAction, settings: [] };
  if (BY_ID.has(action)) {
    // The id comes first, whatever it starts with: an id is base64url, and may hold a `-`.
    const id = rest.shift();
    if (id === undefined || id === '')
      throw new ConfigError(`webhooks ${action} needs the id of the subscription: node dist/server.js webhooks ${action} ID [options]`);
    parsed.id = id;
  }
  readCommandOptions(rest, parsed.action === 'create' ? CREATE_OPTIONS : {}, parsed, parsed.settings);
  if (parsed.action === 'create' && (parsed.url === undefined || parsed.events === undefined)) {
    throw new ConfigError('webhooks create needs --url URL and --events TYPE[,TYPE...]');
  }
  return parsed;
}

/**
 * The body `POST /api/webhooks` would get: `--events` split at its commas into the array the
 * route takes, each type trimmed, so that the service's check names whatever is wrong in it.
 */
function subscriptionInput(cmd: WebhooksCommand): Record<string, unknown> {
  const events = cmd.events!.split(',').map((type) => type.trim());
  return { url: cmd.url, events, ...(cmd.domain === undefined ? {} : { domain: cmd.domain }) };
}

/**
 * Runs the command; resolves with the exit code: 0 done; 1 failed (a subscription the service
 * refuses, an id no subscription has, a store that cannot be opened or read); 2 bad usage.
 */
export async function runWebhooksCommand(cmd: WebhooksCommand, io: CommandIo): Promise<number> {
  const label = `url-shortener webhooks ${cmd.action}`;
  const config = commandConfig(`webhooks ${cmd.action}`, cmd.settings, io, label);
  if (config === 2) return 2;
  const log = createLogger(config.logLevel, io.stderr);
  const opened = await openStore(config, log, io, label);
  if (typeof opened === 'number') return opened;
  try {
    // The rules are the server's, from the same settings: its domains, its private receivers, its tracking.
    const webhooks = createWebhooks({
      store: opened.webhooks,
      domains: createDomains(config.baseUrl ?? `http://localhost:${config.port}`, config.domains),
      allowPrivate: config.webhookAllowPrivate,
      clicksTracked: config.visitTracking === 'events',
      now: io.now,
    });
    return await act(cmd, webhooks, log, io, label);
  } finally {
    await opened.close();
  }
}

/** The command's work on the opened store's subscriptions. */
async function act(cmd: WebhooksCommand, webhooks: Webhooks, log: Logger, io: CommandIo, label: string): Promise<number> {
  const print = (value: unknown): void => void io.stdout.write(`${JSON.stringify(value)}\n`);
  /** A failure: the input's refusal in the words the route answers a 400 with, else an error line. */
  const failed = (f: Failed): number => {
    if (f.error === 'invalid') io.stderr.write(`${label}: ${f.detail}\n`);
    else if (f.error === 'unavailable') log.error(f.detail);
    else log.error(`no webhook subscription has this id${cmd.action === 'delete' ? '; nothing was deleted' : ''}`, { webhook: cmd.id });
    return 1;
  };
  switch (cmd.action) {
    case 'create': {
      const made = await webhooks.create(subscriptionInput(cmd));
      if (!made.ok) return failed(made);
      print({ ...made.subscription, secret: made.secret });
      return 0;
    }
    case 'list': {
      const listed = await webhooks.list();
      if (!listed.ok) return failed(listed);
      print({ count: listed.subscriptions.length, webhooks: listed.subscriptions });
      return 0;
    }
    case 'delete': {
      const removed = await webhooks.remove(cmd.id!);
      return removed.ok ? 0 : failed(removed);
    }
    case 'deliveries': {
      const read = await webhooks.deliveries(cmd.id!);
      if (!read.ok) return failed(read);
      print({ count: read.deliveries.length, deliveries: read.deliveries });
      return 0;
    }
  }
}
