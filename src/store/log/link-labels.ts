/**
 * A link's labels in the log store: its title and tags (format 4) and its author, the `id` of the
 * stored key that created it (format 5, docs/storage.md). What a slot keeps of them (`slotLabels`:
 * only what it has, nothing for a link that has none, so the others pay nothing) and the
 * `<labels>` field of a log line that carries them, written and read back here side by side.
 *
 * The field is the JSON array `[title, tags]`, or `[title, tags, author]` for a link with an
 * author: JSON escapes every tab and line break a title may hold, so the field needs no escaping of
 * its own. Only a create carries the author: an edit never changes it, so an edit's labels are
 * `[title, tags]` and an edit keeps the author its link has.
 */
import { labelsOf, type Labels, type LinkRecord } from '../link-store.ts';

/** Where labels are read from: a record, an entry of the log. */
export type LabelSource = Pick<LinkRecord, 'title' | 'tags' | 'author'>;

/** The labels a slot keeps: only those it has (`LinkRecord`). */
export interface SlotLabels extends Labels {
  author?: string;
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
  if (author === undefined) return labels;
  return { ...labels, author };
}

/**
 * The `<labels>` field of a create (`withAuthor`) or an edit, or undefined when the link has none
 * of what the line carries.
 */
export function encodeLabels(source: LabelSource, withAuthor: boolean): string | undefined {
  const labels = labelsOf(source.title, source.tags);
  const author = withAuthor ? authorOf(source) : undefined;
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
  if (!Array.isArray(value) || (value.length !== 2 && !(withAuthor && value.length === 3))) return undefined;
  const [title, tags, author] = value as unknown[];
  if ((title !== null && typeof title !== 'string') || !Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string')) return undefined;
  if (value.length === 3 && (typeof author !== 'string' || author === '')) return undefined;
  const labels: LabelSource = {};
  if (title !== null) labels.title = title;
  if (tags.length > 0) labels.tags = tags as string[];
  if (typeof author === 'string') labels.author = author;
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
