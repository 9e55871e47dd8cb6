/**
 * One delivery attempt of a webhook over HTTP(S): resolve the subscription URL's host afresh, check
 * every address it resolves to (`resolveTarget`), connect to exactly the address checked, POST the
 * signed body once, and read what the receiver answers: its status and the start of its body.
 *
 * Whatever happens, the attempt ends with a result and never throws: a refused target, a network
 * error, a TLS failure and the time limit are each a result the schedule retries (`outcomeOf`).
 * Nothing is retried or followed here: a redirect is its status, and the next attempt is the
 * schedule's, which signs it anew.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent as HttpAgent, type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { SecureContextOptions } from 'node:tls';
import { type AttemptResult, DELIVERY_TIMEOUT_MS, keptResponse, MAX_RESPONSE_BYTES } from './schedule.ts';
import { type LookupAddress, resolveTarget, type Target } from './targets.ts';

/** One attempt to send: what to send where, as the outbox holds it and `deliveryHeaders` signed it. */
export interface SendRequest {
  /** The subscription URL (http or https), checked when the subscription was made. */
  url: string;
  /** The headers to send as given: `webhook-id`, `webhook-timestamp`, `webhook-signature`, `content-type`. */
  headers: [string, string][];
  /** The JSON text that was signed, sent as is in UTF-8. */
  body: string;
  /** The `webhook_allow_private` setting: whether this machine and private networks may be reached. */
  allowPrivate: boolean;
}

/** What the attempt came to, for the schedule (`outcomeOf`) and for the list of deliveries. */
export interface SendResult extends AttemptResult {
  /** The start of the receiver's answer as kept (`keptResponse`), '' when none was read. */
  response: string;
  /** Whole milliseconds from the start of the lookup to the end of the attempt, on the sender's clock. */
  durationMs: number;
}

export interface SenderOptions {
  /** Resolves a host name to all its addresses; the system resolver (`dns.lookup`) when not given. */
  lookup?: (host: string) => Promise<LookupAddress[]>;
  /** The time limit of one whole attempt, lookup included; `DELIVERY_TIMEOUT_MS` when not given. */
  timeoutMs?: number;
  /** A monotonic clock in milliseconds, read for `durationMs`; `performance.now` when not given. */
  now?: () => number;
  /**
   * The certificate authorities an https receiver's certificate must chain to, in place of Node's
   * bundled ones: a site's private CA, or a test's own. The certificate and its name are verified
   * either way: there is no option to skip that, since a delivery carries data worth a signature.
   */
  ca?: SecureContextOptions['ca'];
}

/**
 * Sent with every delivery, so a receiver's logs and firewall can tell webhooks from other traffic.
 * No version: this folder does not read the package's (docs/architecture.md lists what it imports).
 */
export const USER_AGENT = 'url-shortener-webhooks';

/**
 * How much of an answer's body is read: the kept bytes and enough past them for `keptResponse` to
 * see where a character the limit would split begins (a UTF-8 character is at most 4 bytes). Then
 * the connection is closed: a receiver answering without end costs no more than one answering "ok".
 */
const READ_BYTES = MAX_RESPONSE_BYTES + 4;

/** The longest error text kept: a code or a one-line message, not a stack. */
const MAX_ERROR_LENGTH = 200;

/**
 * The resolver used when none is injected: every address, in the order the system resolver gives
 * them (`verbatim`), so `resolveTarget` checks all of them and picks the system's preference.
 */
const systemLookup = (host: string): Promise<LookupAddress[]> => dnsLookup(host, { all: true, verbatim: true }) as Promise<LookupAddress[]>;

/**
 * A function that makes one attempt per call; calls may run side by side. Connections are kept
 * alive between attempts, pooled by what an attempt connects to: the address it resolved and
 * checked, the port, and for https the name the certificate was verified for (node's agents key
 * their pools by exactly these). So a socket is reused only for an address that was just checked
 * again, and a name whose DNS changed gets a connection to its new address. A connection is kept
 * only after an answer read to its end: any other ending destroys it.
 */
export function createSender(options: SenderOptions = {}): (req: SendRequest) => Promise<SendResult> {
  const lookup = options.lookup ?? systemLookup;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const now = options.now ?? (() => performance.now());
  const ca = options.ca;
  // A subscription's deliveries go one at a time, so a few sockets per receiver are plenty.
  const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 4 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 4 }) };
  return async (req) => {
    const started = now();
    const result = await attempt(req, { lookup, timeoutMs, ca, agents });
    // A clock set back mid-attempt must not make a negative duration.
    return { ...result, durationMs: Math.max(0, Math.round(now() - started)) };
  };
}

/**
 * The `Host` header for `target`: the URL's host, with `:port` only when the port is not the
 * scheme's default, and an IPv6 address in brackets, as a browser sends it. The name, not the
 * address connected to: a receiver behind a shared address (virtual hosting, a CDN) routes by it.
 */
export function hostHeader(target: Pick<Target, 'host' | 'port'>, protocol: 'http:' | 'https:'): string {
  const host = isIP(target.host) === 6 ? `[${target.host}]` : target.host;
  return target.port === (protocol === 'https:' ? 443 : 80) ? host : `${host}:${target.port}`;
}

/** A short text for an error a delivery ran into: its code (`ECONNREFUSED`) when it has one. */
function errorText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH);
}

/**
 * The one attempt, under one time limit from the lookup to the last byte read: a single timer,
 * rather than a limit per phase, since a receiver that answers each phase just in time would
 * otherwise hold a delivery for the sum of them. The first ending wins (`finish`), and ending
 * always destroys the request, so no socket outlives its attempt.
 */
function attempt(
  req: SendRequest,
  options: Required<Pick<SenderOptions, 'lookup' | 'timeoutMs'>> & Pick<SenderOptions, 'ca'> & { agents: Agents },
): Promise<Omit<SendResult, 'durationMs'>> {
  return new Promise((resolve) => {
    let request: ClientRequest | undefined;
    let status: number | undefined;
    const chunks: Buffer[] = [];
    let read = 0;
    let done = false;
    const finish = (end: AttemptResult, whole = false): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // An answer read to its end leaves its connection to the agent, for the next attempt.
      if (!whole) request?.destroy();
      // A status already read is kept beside an error or a timeout: the list of deliveries shows
      // it, and `outcomeOf` lets the error win.
      resolve({ ...(status === undefined ? {} : { status }), ...end, response: keptResponse(Buffer.concat(chunks)) });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), options.timeoutMs);
    const onResponse = (res: IncomingMessage): void => {
      status = res.statusCode;
      res.on('data', (chunk: Buffer) => {
        if (read < READ_BYTES) chunks.push(chunk.subarray(0, READ_BYTES - read));
        read += chunk.length;
        if (read >= READ_BYTES) finish({});
      });
      res.on('end', () => finish({}, read < READ_BYTES));
      res.on('error', (error) => finish({ error: errorText(error) }));
      // An answer cut off before its end is not one the receiver finished.
      res.on('close', () => finish(res.complete ? {} : { error: 'the connection closed before the answer ended' }));
    };
    resolveTarget(req.url, { allowPrivate: req.allowPrivate, lookup: options.lookup })
      .then((target) => {
        // A lookup that answers after the time limit must not start a connection nobody waits for.
        if (done) return;
        if (!target.ok) return finish({ error: target.reason });
        request = open(req, target, options.ca, options.agents);
        request.on('error', (error) => finish({ error: errorText(error) }));
        request.on('response', onResponse);
        request.end(req.body);
      })
      // `http.request` throws on a header it cannot send (a newline in a value): a result too.
      .catch((error: unknown) => finish({ error: errorText(error) }));
  });
}

/**
 * The request of one attempt, to `target.address` itself: an IP address, which Node connects to
 * without a lookup of its own, so the address connected to is the one `resolveTarget` checked.
 * The name goes where the receiver reads it: the `Host` header and, for https, the TLS
 * `servername` (SNI), which is also the name the certificate is verified against. An IP host sets
 * no servername (SNI cannot carry one), and the certificate is verified against the address.
 */
/** The keep-alive agents of one sender. */
interface Agents {
  http: HttpAgent;
  https: HttpsAgent;
}

function open(req: SendRequest, target: Target, ca: SecureContextOptions['ca'], agents: Agents): ClientRequest {
  const url = new URL(req.url);
  const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
  const headers: Record<string, string> = {};
  for (const [name, value] of req.headers) headers[name.toLowerCase()] = value;
  // Last, so a caller's header cannot contradict what this request actually is.
  headers['host'] = hostHeader(target, protocol);
  headers['content-length'] = String(Buffer.byteLength(req.body, 'utf8'));
  headers['user-agent'] = USER_AGENT;
  const common = {
    host: target.address,
    port: target.port,
    family: target.family,
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers,
  };
  if (protocol === 'http:') return httpRequest({ ...common, agent: agents.http });
  return httpsRequest({
    ...common,
    agent: agents.https,
    ...(isIP(target.host) === 0 ? { servername: target.host } : {}),
    ...(ca === undefined ? {} : { ca }),
  });
}
