/**
 * Fields of a stored link that every store reads alike (`link-store.ts` re-exports them): its
 * labels, and the domain its key names.
 */

/** A link's title and tags, only those it has (`LinkRecord`): most links have neither. */
export interface Labels {
  title?: string;
  tags?: readonly string[];
}

/**
 * The labels of a title and tags as given (null, empty or absent = none): undefined when there are
 * none, so a record or an entry without them carries no such field and a store keeps nothing.
 */
export function labelsOf(title: string | null | undefined, tags: readonly string[] | undefined): Labels | undefined {
  const hasTitle = title !== null && title !== undefined && title !== '';
  const hasTags = tags !== undefined && tags.length > 0;
  if (!hasTitle && !hasTags) return undefined;
  const labels: Labels = {};
  if (hasTitle) labels.title = title;
  if (hasTags) labels.tags = tags;
  return labels;
}

/**
 * Whether the store key `key` is of the domain `domain` (links/domains.ts): null the default one,
 * whose keys hold no `/`; a host, whose keys start with `<host>/`.
 */
export function keyOnDomain(key: string, domain: string | null): boolean {
  return domain === null ? !key.includes('/') : key.length > domain.length + 1 && key.startsWith(domain) && key.charCodeAt(domain.length) === 0x2f;
}
