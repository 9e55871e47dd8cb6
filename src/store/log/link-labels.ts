/**
 * A link's labels in the log store: its title and tags (format 4), its author, the `id` of the
 * stored key that created it (format 5, docs/storage.md), and its routing (format 7: rules,
 * validity, password, `routing.ts`). What a slot keeps of them (`slotLabels`: only what it has,
 * nothing for a link that has none, so the others pay nothing) and the `<labels>` field of a log
 * line that carries them, written and read back here side by side.
 *
 * The field is the JSON array `[title, tags]`, `[title, tags, author]` for a link with an author,
 * and `[title, tags, author, routing]` (author null for none) for a link with routing: JSON
 * escapes every tab and line break a title may hold, so the field needs no escaping of its own.
 * Only a create carries the author: an edit never changes it, so an edit's labels are
 * `[title, tags]`, or `[title, tags, routing]`, and an edit keeps the author its link has. An edit
 * carries the routing whole, as it does the title and tags: one without any clears it.
 */
import { labelsOf, routingOf, someRouting, type Labels, type LinkRecord, type Routing } from '../link-store.ts';

/** Where labels are read from: a record, an entry of the log. */
export type LabelSource = Pick<LinkRecord, 'title' | 'tags' | 'author' | 'routing'>;

/** The labels a slot keeps: only those it has (`LinkRecord`). */
export interface SlotLabels extends Labels {
  author?: string;
  routing?: Routing;
}

/** An author as given (null, empty or absent = none): the id, or undefined. */
function authorOf(source: LabelSource | undefined): string | undefined {
  const author = source?.author;
  return author === null || author === undefined || author === '' ? undefined : author;
}

/**
 * The labels of a source as a slot keeps them (null, empty or absent = none): undefined when there
 * are none, so a record or an entry without them carries no such field and the keydir keeps nothing.
 */
export function slotLabels(source: LabelSource | undefined): SlotLabels | undefined {
  const labels: SlotLabels | undefined = source && labelsOf(source.title, source.tags);
  const author = authorOf(source);
  const routing = someRouting(source?.routing);
  if (author === undefined && routing === undefined) return labels;
  return { ...labels, ...(author === undefined ? {} : { author }), ...(routing === undefined ? {} : { routing }) };
}

/**
 * The `<labels>` field of a create (`withAuthor`) or an edit, or undefined when the link has none
 * of what the line carries.
 */
export function encodeLabels(source: LabelSource, withAuthor: boolean): string | undefined {
  const labels = labelsOf(source.title, source.tags);
  const author = withAuthor ? authorOf(source) : undefined;
  const routing = someRouting(source.routing);
  if (routing !== undefined) {
    const head = [labels?.title ?? null, labels?.tags ?? []];
    return JSON.stringify(withAuthor ? [...head, author ?? null, routing] : [...head, routing]);
  }
  if (author !== undefined) return JSON.stringify([labels?.title ?? null, labels?.tags ?? [], author]);
  return labels && JSON.stringify([labels.title ?? null, labels.tags ?? []]);
}

/**
 * A `<labels>` field read back (`withAuthor`: a create's, which may carry one): undefined when it
 * is not one (the entry is then no entry).
 */
export function decodeLabels(text: string, withAuthor: boolean): LabelSource | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  // A create's: [title, tags], [title, tags, author] or [title, tags, author | null, routing]; an
  // edit's: [title, tags] or [title, tags, routing].
  if (!Array.isArray(value) || value.length < 2 || value.length > (withAuthor ? 4 : 3)) return undefined;
  const [title, tags] = value as unknown[];
  const author: unknown = withAuthor ? value[2] : undefined;
  const routing = routingOf(value.length === (withAuthor ? 4 : 3) ? value[value.length - 1] : undefined);
  if ((title !== null && typeof title !== 'string') || !Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) return undefined;
  if (routing === false) return undefined;
  if (withAuthor && value.length >= 3 && !(typeof author === 'string' && author !== '') && !(value.length === 4 && author === null)) return undefined;
  const labels: LabelSource = {};
  if (title !== null) labels.title = title;
  if (tags.length > 0) labels.tags = tags as string[];
  if (typeof author === 'string') labels.author = author;
  if (routing !== undefined) labels.routing = routing;
  return labels;
}

const AUTHOR_ONLY_HEAD = Buffer.from('[null,[],"', 'latin1');

/**
 * The author of a `<labels>` field at `buf[start, end)` that holds an author and nothing else
 * (`[null,[],"<id>"]`, an id of base64url characters, as the service makes them), read from its
 * bytes; undefined for any other field, which `decodeLabels` reads. Start-up reads the create of
 * every link made with a stored key: as fast, so, as a create without labels.
 */
export function authorOnly(buf: Buffer, start: number, end: number): string | undefined {
  const from = start + AUTHOR_ONLY_HEAD.length;
  if (end - from < 3 || buf[end - 1] !== 0x5d /* ] */ || buf[end - 2] !== 0x22 /* " */) return undefined;
  if (buf.compare(AUTHOR_ONLY_HEAD, 0, AUTHOR_ONLY_HEAD.length, start, from) !== 0) return undefined;
  for (let i = from; i < end - 2; i++) if (BASE64URL[buf[i]!] !== 1) return undefined;
  return buf.toString('latin1', from, end - 2);
}

/** The bytes of base64url, by byte (1: one of them). */
const BASE64URL = new Uint8Array(256);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_') BASE64URL[ch.charCodeAt(0)] = 1;
