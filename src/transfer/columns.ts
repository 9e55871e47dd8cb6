/**
 * Which column of an import holds what (docs/api.md, export and import), as one table: the header
 * names the common shorteners write in their exports, compared case-insensitively. Shlink's web
 * client writes `shortCode,longUrl,createdAt,title,tags,visits`, YOURLS
 * `keyword,url,title,timestamp,clicks`, this service its own record names. The same table reads
 * the keys of a JSON Lines record.
 */

/** A field of an imported row, named as the record names it. */
export type Field =
  | 'url'
  | 'code'
  | 'created'
  | 'visits'
  | 'retention'
  | 'maxVisits'
  | 'title'
  | 'tags'
  | 'author'
  | 'domain'
  | 'rules'
  | 'forwardQuery'
  | 'validSince'
  | 'validUntil'
  | 'fallbackUrl'
  | 'passwordHash'
  | 'password'
  | 'passwordProtected';

export const ALIASES: Readonly<Record<Field, readonly string[]>> = {
  url: ['original_url', 'url', 'long_url', 'longUrl', 'Long URL'],
  code: ['short_code', 'code', 'shortCode', 'Short code', 'keyword'],
  created: ['created_at', 'createdAt', 'timestamp', 'date_created'],
  visits: ['visit_count', 'visits', 'clicks'],
  retention: ['retention_days'],
  maxVisits: ['max_visits'],
  title: ['title'],
  tags: ['tags'],
  author: ['author'],
  domain: ['domain'],
  // The routing (row-routing.ts). Shlink names these three so in its API, with the same meaning.
  rules: ['rules'],
  forwardQuery: ['forward_query', 'forwardQuery'],
  validSince: ['valid_since', 'validSince'],
  validUntil: ['valid_until', 'validUntil'],
  fallbackUrl: ['fallback_url'],
  passwordHash: ['password_hash'],
  // Read only to refuse a row that would otherwise lose its protection unseen (row-routing.ts).
  password: ['password'],
  passwordProtected: ['password_protected'],
};

/** Lower-cased alias → field. */
const BY_NAME: ReadonlyMap<string, Field> = new Map(
  (Object.entries(ALIASES) as [Field, readonly string[]][]).flatMap(([field, names]) => names.map((n) => [n.toLowerCase(), field] as const)),
);

/** The field a header name or JSON key stands for; undefined for the columns an import ignores. */
export function fieldOf(name: string): Field | undefined {
  return BY_NAME.get(name.trim().toLowerCase());
}

/** Column positions by field. */
export type Columns = Partial<Record<Field, number>>;

/**
 * The columns of a CSV header row. Two columns for one field (`url` and `long_url`) are refused:
 * which one to trust is the sender's call, not a guess. The url column is required.
 */
export function columnsOf(header: readonly string[]): Columns | string {
  const columns: Columns = {};
  for (let i = 0; i < header.length; i++) {
    const field = fieldOf(header[i]!);
    if (field === undefined) continue;
    if (columns[field] !== undefined) return `the header names the ${field} column twice ("${header[columns[field]!]}" and "${header[i]}")`;
    columns[field] = i;
  }
  if (columns.url === undefined) return `the header has no url column (one of ${ALIASES.url.join(', ')})`;
  return columns;
}
