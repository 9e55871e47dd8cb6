/**
 * A load of redirects and edits for the crash tests of visit events (docs/analytics.md, the
 * invariant events + untracked_visits = visit_count), and what the clients were told of each link,
 * so that a store read after a `kill -9` can be held to it. The store-specific parts (starting,
 * killing, reading the counts back) are the tests'; the mix and the checks are here, shared by
 * the log store's test and the cluster's.
 *
 * The mix: redirects with and without `User-Agent` (browsers, bots, a link-preview fetcher),
 * `Referer`, `X-Forwarded-For`, some `DNT: 1`; links created with and without a visit limit, some
 * on custom codes that are deleted and taken again by new links (events belong to the link, not
 * its code); deletes; edits that give a link a limit. Every choice comes from a seeded PRNG.
 */
import { Agent, request as httpRequest } from 'node:http';
import { prng } from './crash-harness.ts';

export const LOAD_KEY = 'events-crash-key';

/** Agents of the mix: [User-Agent, is it a bot by our classifier]; undefined sends none. */
const AGENTS: readonly [string | undefined, boolean][] = [
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', false],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1', false],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', false],
  ['curl/8.5.0', true],
  ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', true],
  // A link-preview fetcher: a limited link answers it with a page, uncounted.
  ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', true],
  [undefined, false],
];
const PREVIEW_AGENT = 5;
/** The hosts of the `Referer`s sent: an event's referrer is one of them or null. */
export const REFERRER_HOSTS: readonly string[] = ['news.example.org', 'mail.example.net', 'social.example.com'];
/** Custom codes that links take, lose to a delete and take again. */
const REUSED_CODES = Array.from({ length: 12 }, (_, i) => `evreuse${i}`);
/** The first links created are visited most and never deleted. */
const HOT = 6;

/** What the clients know of one link (one link: a code taken again is a new one). */
export interface TrackedLink {
  code: string;
  url: string;
  /** `maybe`: a create or delete was cut off by a kill; the next read of the store decides. */
  state: 'present' | 'absent' | 'maybe';
  /** The visit limit, once a create or an edit that set it was acknowledged. */
  limit: number | null;
  /** The limit the link was created with: no more 302s than that, ever. */
  createdLimit: number | null;
  /** GETs written to this link: no count may pass it. */
  sent: number;
  /** Of them, GETs with a bot's `User-Agent`: no more bot events than that. */
  botSent: number;
  /** What the store must show at least: acknowledged limited 302s, an edit's reported count, the last count read. */
  floor: number;
  /** Acknowledged 302s of the link while it had no limit known to the client, at their times. */
  unlimitedAcks: number[];
  /** 302s acknowledged by the link ever. */
  granted: number;
  /** Requests on their way: a code is taken again only once none is. */
  inFlight: number;
  /** An edit giving a limit is on its way: a visit may meet the limit before the client knows it. */
  editing: boolean;
  /** An edit giving a limit was cut off by a kill: the store may hold it or not, until it is read. */
  mayBeLimited: boolean;
  /** Edits acknowledged: a visit answered across one may be in the count the edit reported, or not. */
  edits: number;
}

export interface LoadOptions {
  seed: number;
  /** A round number, so that each round's choices differ. */
  round: number;
  workers: number;
  /** Statuses that mean "no answer from the instance" (the proxy's 502 for a killed one). */
  unanswered?: readonly number[];
}

export interface LoadTotals {
  creates: number;
  deletes: number;
  edits: number;
  visits: number;
  limited302: number;
  /** Requests cut off (or answered by nobody). */
  cut: number;
}

/** A broken promise, with the seed to replay it. */
export class LoadViolation extends Error {
  constructor(seed: number, round: number, property: string, detail: string) {
    super(`events crash (seed ${seed}, round ${round}): ${property}: ${detail}`);
    this.name = 'LoadViolation';
  }
}

interface Answer {
  status: number;
  body: string;
}

/** The links and the load that drives them, across rounds (restarts). */
export class EventLoad {
  readonly links = new Map<string, TrackedLink>();
  /** Present links not being deleted: what workers visit, edit and delete. */
  private pool: string[] = [];
  /** Creates cut off: such a link may or may not be in the store; URL → limit asked. */
  private pending = new Map<string, { code: string | undefined; limit: number | null }>();
  /** Requests answered in every round so far, and who waits for a number of them (`answered`). */
  private answers = 0;
  private waits: { until: number; resolve: () => void }[] = [];
  constructor(private readonly seed: number) {}

  /**
   * Resolves once `n` more requests than so far have been answered. A round's kill waits for it as
   * well as for its seeded moment, so that a slow or busy machine does as much before each kill as
   * a fast one: the round is bound by work, not only by time.
   */
  answered(n: number): Promise<void> {
    const until = this.answers + n;
    return new Promise((resolve) => this.waits.push({ until, resolve }));
  }

  private answer(): void {
    this.answers++;
    if (this.waits.length === 0) return;
    const due = this.waits.filter((w) => w.until <= this.answers);
    this.waits = this.waits.filter((w) => w.until > this.answers);
    for (const w of due) w.resolve();
  }

  fail(round: number, property: string, detail: string): LoadViolation {
    return new LoadViolation(this.seed, round, property, detail);
  }

  /**
   * Runs the mix against `port` until `stop` resolves (the caller kills something meanwhile and
   * says so with `killed()`), then waits for every request to end. Answers after a kill may be
   * missing; before it, every request must be answered as the contract says.
   */
  async run(port: number, options: LoadOptions, stop: Promise<void>, killed: () => boolean): Promise<LoadTotals> {
    const { seed, round, workers } = options;
    const unanswered = new Set(options.unanswered ?? []);
    const agent = new Agent({ keepAlive: true, maxSockets: workers });
    const totals: LoadTotals = { creates: 0, deletes: 0, edits: 0, visits: 0, limited302: 0, cut: 0 };
    let stopped = false;
    let violation: LoadViolation | undefined;
    const fail = (property: string, detail: string): LoadViolation => this.fail(round, property, detail);

    const exchange = async (
      method: string,
      path: string,
      headers: Record<string, string>,
      body: string | undefined,
      link: TrackedLink | undefined,
      written?: () => void,
    ): Promise<Answer | undefined> => {
      if (link) link.inFlight++;
      try {
        const answer = await send(agent, port, method, path, headers, body, written);
        if (unanswered.has(answer.status)) {
          totals.cut++;
          return undefined;
        }
        this.answer();
        return answer;
      } catch (err) {
        if (!killed() && unanswered.size === 0) throw fail('the server answers until it is killed', `${method} ${path}: ${(err as Error).message}`);
        totals.cut++;
        return undefined;
      } finally {
        if (link) link.inFlight--;
      }
    };

    const create = async (rand: () => number, w: number, i: number): Promise<void> => {
      const url = `https://example.com/events/${seed}/${round}/${w}/${i}`;
      const limit = rand() < 0.3 ? 5 + Math.floor(rand() * 40) : null;
      let code: string | undefined;
      if (rand() < 0.25) {
        // A custom code free now: its last link is gone for sure and has nothing in flight.
        code = REUSED_CODES.find((c) => {
          const last = this.links.get(c);
          return !last || (last.state === 'absent' && last.inFlight === 0);
        });
      }
      const body: Record<string, unknown> = { url };
      if (code) body['code'] = code;
      if (limit !== null) body['max_visits'] = limit;
      this.pending.set(url, { code, limit });
      if (code) {
        // Taken meanwhile by no one else: the entry stands for the link being made.
        this.links.set(code, { ...fresh(code, url, limit), state: 'maybe' });
      }
      const r = await exchange('POST', '/api/shorten', { 'content-type': 'application/json' }, JSON.stringify(body), code ? this.links.get(code) : undefined);
      if (!r) return;
      if (r.status !== 201) throw fail('a create is answered 201', `${JSON.stringify(body)}: ${r.status} ${r.body}`);
      this.pending.delete(url);
      const made = r.body.slice(r.body.lastIndexOf('/') + 1);
      if (code && made !== code) throw fail('a custom code is kept', `${code} came back as ${made}`);
      const link = code ? this.links.get(code)! : fresh(made, url, limit);
      link.state = 'present';
      this.links.set(made, link);
      this.pool.push(made);
      totals.creates++;
    };

    const remove = async (pick: number): Promise<void> => {
      const code = this.take(pick);
      const link = this.links.get(code)!;
      link.state = 'maybe';
      const r = await exchange('DELETE', `/api/urls/${code}`, { 'x-api-key': LOAD_KEY }, undefined, link);
      if (!r) return;
      if (r.status !== 204) throw fail('a delete of a present link is answered 204', `${code}: ${r.status} ${r.body}`);
      link.state = 'absent';
      totals.deletes++;
    };

    const edit = async (code: string, rand: () => number): Promise<void> => {
      const link = this.links.get(code)!;
      if (mayHaveLimit(link)) return;
      // Mostly room left, sometimes used up at once.
      const limit = link.sent + (rand() < 0.8 ? 3 + Math.floor(rand() * 20) : -1);
      if (limit < 1) return;
      link.editing = true;
      const r = await exchange(
        'PATCH',
        `/api/urls/${code}`,
        { 'x-api-key': LOAD_KEY, 'content-type': 'application/json' },
        JSON.stringify({ max_visits: limit }),
        link,
      ).finally(() => (link.editing = false));
      if (!r) {
        link.mayBeLimited = true;
        return;
      }
      if (r.status === 404 && link.state !== 'present') return;
      if (r.status !== 200) throw fail('an edit of a present link is answered 200', `${code}: ${r.status} ${r.body}`);
      const record = JSON.parse(r.body) as { visit_count: number; max_visits: number };
      // The count the edit reports is durable with it (docs/storage.md, visit limits).
      link.floor = Math.max(link.floor, record.visit_count);
      link.limit = record.max_visits;
      // The visits answered before are in that count: not to be required twice.
      link.unlimitedAcks = [];
      link.edits++;
      totals.edits++;
    };

    const visit = async (code: string, rand: () => number): Promise<void> => {
      const link = this.links.get(code)!;
      const a = Math.floor(rand() * AGENTS.length);
      const [agentText, bot] = AGENTS[a]!;
      const headers: Record<string, string> = { 'x-forwarded-for': `198.51.100.${Math.floor(rand() * 250)}, 10.0.0.${Math.floor(rand() * 4)}` };
      if (agentText !== undefined) headers['user-agent'] = agentText;
      if (rand() < 0.6) headers['referer'] = `https://${REFERRER_HOSTS[Math.floor(rand() * REFERRER_HOSTS.length)]}/page?q=${Math.floor(rand() * 1000)}`;
      if (rand() < 0.1) headers['dnt'] = '1';
      // A limit known before the request was sent: its 302 is durable before the answer.
      const limited = link.limit !== null;
      const edits = link.edits;
      const r = await exchange(
        'GET',
        `/${code}`,
        headers,
        undefined,
        link,
        once(() => {
          link.sent++;
          if (bot) link.botSent++;
        }),
      );
      if (!r) return;
      if (r.status === 302) {
        link.granted++;
        totals.visits++;
        if (limited) {
          link.floor++;
          totals.limited302++;
          // Unless an edit was acknowledged meanwhile: its count may hold this visit or not.
        } else if (link.edits === edits) link.unlimitedAcks.push(performance.now());
      } else if (r.status === 410 && mayHaveLimit(link)) {
        // Used up.
      } else if (r.status === 200 && a === PREVIEW_AGENT && mayHaveLimit(link)) {
        // The preview page of a limited link: no visit.
      } else if (r.status === 404 && link.state !== 'present') {
        // A delete raced the visit.
      } else {
        throw fail(
          'a present link answers its visit',
          `GET /${code} (${link.limit === null ? 'no limit' : `limit ${link.limit}`}, ${link.granted} granted): ${r.status} ${r.body.slice(0, 200)}`,
        );
      }
    };

    const worker = async (w: number): Promise<void> => {
      const rand = prng((seed ^ Math.imul(round + 1, 0x9e3779b1) ^ Math.imul(w + 1, 0x85ebca6b)) >>> 0);
      for (let i = 0; !stopped && !violation; i++) {
        const r = rand();
        try {
          if (this.pool.length < HOT || r < 0.12) await create(rand, w, i);
          else if (r < 0.18 && this.pool.length > HOT * 2) await remove(HOT + Math.floor(rand() * (this.pool.length - HOT)));
          else if (r < 0.22) await edit(this.pool[HOT + Math.floor(rand() * (this.pool.length - HOT))] ?? this.pool[0]!, rand);
          else await visit(this.pool[Math.floor(rand() * (rand() < 0.4 ? HOT : this.pool.length))]!, rand);
        } catch (err) {
          violation ??= err instanceof LoadViolation ? err : fail('the load runs', (err as Error).stack ?? String(err));
        }
      }
    };

    const running = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
    await Promise.race([stop, running]);
    stopped = true;
    await running;
    agent.destroy();
    if (violation) throw violation;
    return totals;
  }

  /** Takes the link at `pick` out of the pool (swap-remove), so no worker visits or deletes it meanwhile. */
  private take(pick: number): string {
    const code = this.pool[pick]!;
    this.pool[pick] = this.pool[this.pool.length - 1]!;
    this.pool.pop();
    return code;
  }

  /**
   * Reconciles the clients' view with the store as read after a kill: creates cut off that landed
   * become links, deletes cut off are decided, edits cut off are read back. `stored` maps every
   * live code to its URL and limit. Throws when an acknowledged create or delete did not survive.
   */
  settle(round: number, stored: ReadonlyMap<string, { url: string; maxVisits: number | null }>): void {
    for (const [code, got] of stored) {
      const link = this.links.get(code);
      if (link && link.url === got.url && link.state !== 'absent') continue;
      const pending = this.pending.get(got.url);
      if (!pending) throw this.fail(round, 'no link appears that was never requested', `${code} → ${got.url}`);
      const made = fresh(code, got.url, pending.limit);
      made.state = 'present';
      this.links.set(code, made);
      this.pool.push(code);
    }
    for (const [url, p] of this.pending) {
      // A custom-code create that did not land: its code is free again.
      const link = p.code === undefined ? undefined : this.links.get(p.code);
      if (link && link.url === url && !stored.has(p.code!)) link.state = 'absent';
    }
    this.pending.clear();
    for (const [code, link] of this.links) {
      const got = stored.get(code);
      if (link.state === 'present' && !got) throw this.fail(round, 'an acknowledged create survives', `${code} → ${link.url} is missing`);
      if (link.state === 'absent' && got) throw this.fail(round, 'an acknowledged delete survives', `${code} (answered 204) is back`);
      if (link.state === 'maybe') {
        link.state = got ? 'present' : 'absent';
        if (got && !this.pool.includes(code)) this.pool.push(code);
      }
      // An edit cut off by the kill may have given a limit.
      if (got) link.limit = got.maxVisits;
      link.mayBeLimited = false;
    }
  }

  /**
   * Holds one live link to what the clients were told. `windowMs`: the unlimited visits acknowledged
   * this long before the kill (`killedAt`, performance.now()) must be counted; 0: all of them
   * (nothing but the instance died). Returns the broken property, or undefined.
   */
  check(
    link: TrackedLink,
    got: { visits: number; untracked: number; events: number; botEvents: number },
    killedAt: number,
    windowMs: number,
  ): string | undefined {
    const { visits, untracked, events, botEvents } = got;
    const name = `${link.code} (${link.url})`;
    if (events + untracked !== visits) return `events + untracked_visits = visit_count: ${name}: ${events} + ${untracked} ≠ ${visits}`;
    if (untracked !== 0) return `every visit has its event (visit_tracking=events, nothing imported): ${name}: ${untracked} untracked`;
    if (visits > link.sent) return `no count passes the visits sent: ${name}: ${visits}, but ${link.sent} GETs were sent`;
    if (botEvents > link.botSent) return `no more bot events than bots sent: ${name}: ${botEvents} of ${link.botSent}`;
    if (link.createdLimit !== null && (visits > link.createdLimit || link.granted > link.createdLimit)) {
      return `a limit is never passed: ${name}: limit ${link.createdLimit}, count ${visits}, ${link.granted} 302s`;
    }
    const floor = link.floor + link.unlimitedAcks.filter((at) => windowMs === 0 || at < killedAt - windowMs).length;
    if (visits < floor) {
      const ages = link.unlimitedAcks.map((at) => Math.round(killedAt - at));
      return (
        `no acknowledged visit is lost (limited: none; unlimited: none older than ${windowMs} ms): ${name}: ${visits} counted, ${floor} required ` +
        `(${link.floor} from limited 302s, edits and earlier rounds; unlimited 302s answered ${ages.join(', ')} ms before the kill; limit ${link.limit}, created with ${link.createdLimit})`
      );
    }
    return undefined;
  }

  /** After a check passed: what was counted is the floor from now on. */
  counted(link: TrackedLink, visits: number): void {
    link.floor = visits;
    link.unlimitedAcks = [];
  }

  /** Live links as the clients know them. */
  present(): TrackedLink[] {
    return [...this.links.values()].filter((l) => l.state === 'present');
  }
}

/** Whether the store may hold a visit limit for the link: one known, one on its way, or one cut off. */
const mayHaveLimit = (link: TrackedLink): boolean => link.limit !== null || link.editing || link.mayBeLimited;

function fresh(code: string, url: string, limit: number | null): TrackedLink {
  return {
    code,
    url,
    state: 'present',
    limit,
    createdLimit: limit,
    sent: 0,
    botSent: 0,
    floor: 0,
    unlimitedAcks: [],
    granted: 0,
    inFlight: 0,
    editing: false,
    mayBeLimited: false,
    edits: 0,
  };
}

const once = (f: () => void): (() => void) => {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      f();
    }
  };
};

/** One request on the keep-alive `agent`; `written` runs once its bytes are on the socket (or an answer came). */
function send(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
  written?: () => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers, agent }, (res) => {
      written?.();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
      res.on('close', () => {
        if (!res.complete) reject(new Error('response cut off'));
      });
    });
    if (written) req.once('finish', written);
    req.on('error', reject);
    req.end(body);
  });
}
