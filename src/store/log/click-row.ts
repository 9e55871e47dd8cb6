/**
 * A `link.clicked` row as the log store keeps it in its outbox: the visit's packed words
 * (`visits/packed.ts`) and the link's key, not its body; one object, the row and its event at
 * once, and its id as a string shared by thousands and a number. A busy link's clicks are tens of
 * thousands a second, each row kept until delivered: made and written out with a body, as
 * objects apiece, they cost the redirect a fifth of its speed. The body is made from these fields
 * when the row is delivered (`data`), the same on every attempt.
 */
import { BOT, BROWSER_SHIFT, COUNTRY_BITS, DEVICE_SHIFT, FAMILY_BITS, OS_SHIFT, attrsOf } from '../../visits/packed.ts';
import { clickedData, eventIdOf, eventIdParts, keyCode, keyDomain, type OutboxEvent, type PendingDelivery } from '../webhook-store.ts';

/** The attrs bits a click's body shows: country, browser, OS, device and the bot flag; never the visitor's nor the rule's. */
export const CLICK_ATTRS = COUNTRY_BITS | (FAMILY_BITS << BROWSER_SHIFT) | (FAMILY_BITS << OS_SHIFT) | (FAMILY_BITS << DEVICE_SHIFT) | BOT;

export class ClickRow implements PendingDelivery, OutboxEvent {
  readonly attrs: number;

  constructor(
    readonly seq: number,
    readonly subscription: string,
    readonly attempts: number,
    readonly nextAt: number,
    /** The id's first characters (`eventIdHead`), shared; the whole id when `idTail` is -1. */
    readonly idHead: string,
    /** Its last 4 characters as `newEventTail` gives them, or -1. */
    readonly idTail: number,
    /** The link's store key (`host/code`, or the code on the default domain). */
    readonly key: string,
    /** Unix seconds. */
    readonly time: number,
    /** The referrer's host, null for none. */
    readonly referrer: string | null,
    attrs: number,
  ) {
    this.attrs = (attrs & CLICK_ATTRS) >>> 0;
  }

  /** A row of the id `id` as written (in its parts when it is a `newEventId`, so a replayed outbox is as small). */
  static of(
    seq: number,
    subscription: string,
    attempts: number,
    nextAt: number,
    id: string,
    key: string,
    time: number,
    referrer: string | null,
    attrs: number,
  ): ClickRow {
    const parts = eventIdParts(id);
    return new ClickRow(seq, subscription, attempts, nextAt, parts?.head ?? id, parts?.tail ?? -1, key, time, referrer, attrs);
  }

  get id(): string {
    return this.idTail === -1 ? this.idHead : eventIdOf(this.idHead, this.idTail);
  }

  /** The row is its own event (a getter, not a field: a field apiece costs a busy flush its rows' worth of stores). */
  get event(): OutboxEvent {
    return this;
  }

  get type(): 'link.clicked' {
    return 'link.clicked';
  }

  get data(): string {
    const visit = { time: this.time, referrer: this.referrer, ...attrsOf(this.attrs) };
    return JSON.stringify(clickedData(keyCode(this.key), keyDomain(this.key), visit));
  }

  /** The same row after a failed attempt. */
  retried(attempts: number, nextAt: number): ClickRow {
    return new ClickRow(this.seq, this.subscription, attempts, nextAt, this.idHead, this.idTail, this.key, this.time, this.referrer, this.attrs);
  }

  /**
   * What a checkpoint keeps of the row: its fields, as an `L` line holds them, not its body (a
   * checkpoint of 100,000 owed clicks would otherwise make 100,000 bodies, and hold them);
   * `ClickRow.read` reads it back.
   */
  toJSON(): StoredClick {
    return { click: [this.seq, this.subscription, this.attempts, this.nextAt, this.id, this.key, this.time, this.referrer, this.attrs] };
  }

  /** A row of a checkpoint's image: a click as `toJSON` keeps it, or any other row as it is. */
  static read(row: PendingDelivery | StoredClick): PendingDelivery {
    if (!('click' in row)) return row;
    const [seq, subscription, attempts, nextAt, id, key, time, referrer, attrs] = row.click;
    return ClickRow.of(seq, subscription, attempts, nextAt, id, key, time, referrer, attrs);
  }
}

/** A click row in a checkpoint's footer (JSON). */
export interface StoredClick {
  click: [seq: number, subscription: string, attempts: number, nextAt: number, id: string, key: string, time: number, referrer: string | null, attrs: number];
}
