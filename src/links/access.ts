/**
 * Who may do what (docs/security.md, roles): the roles of API keys as one table, and the sentence
 * a door answers when a key's role falls short. Every door (REST, MCP, Shlink's and YOURLS' APIs)
 * asks `refusalFor` before it acts, so a `creator` key is the same key everywhere.
 */

/** A key's role; each includes the ones below it except `viewer`, a branch of its own. */
export type Role = 'creator' | 'viewer' | 'editor' | 'admin';
export const ROLES: readonly Role[] = ['creator', 'viewer', 'editor', 'admin'];

/**
 * What a request does, as the roles table names it: `create` a link; `read` a link, its stats and
 * visits; `list`, search and export links and their visits (an `editor` its own: every door asks
 * the service with its principal, and the service narrows); `read-all`: the stats of the whole
 * instance, which count every author's visits; `edit` or delete links; `import`; manage `keys`
 * and `domains` (and later webhooks).
 */
export type Action = 'create' | 'read' | 'list' | 'read-all' | 'edit' | 'import' | 'keys' | 'domains' | 'webhooks';

/**
 * The roles table: what each role may do. An `editor` may read, list, export and edit only its own
 * links (`ownLinksOnly`); the instance's totals are not its own, so it reads the stats of each of
 * its links instead.
 */
const MAY: Readonly<Record<Role, ReadonlySet<Action>>> = {
  creator: new Set(['create']),
  viewer: new Set(['read', 'list', 'read-all']),
  editor: new Set(['create', 'read', 'list', 'edit']),
  admin: new Set(['create', 'read', 'list', 'read-all', 'edit', 'import', 'keys', 'domains', 'webhooks']),
};

/** How a refusal names each action: "this key's role (viewer) does not allow creating links". */
const WHAT: Readonly<Record<Action, string>> = {
  create: 'creating links',
  read: 'reading links, their stats or their visits',
  list: 'listing, searching or exporting links',
  'read-all': "reading the whole instance's stats",
  edit: 'editing or deleting links',
  import: 'importing',
  keys: 'managing keys',
  domains: 'managing domains',
  webhooks: 'managing webhooks',
};

/**
 * The key a request presented, once recognized: its role, and the id of the stored key (`null`
 * for a key of `API_KEYS`, which is an admin key and is never stored).
 */
export interface Principal {
  readonly role: Role;
  readonly id: string | null;
  /** The host of the one domain a stored key acts on (docs/security.md, keys for one domain); absent: every domain. */
  readonly domain?: string;
}

/** The admin of `API_KEYS`: no id, so the links it creates have no author. */
export const ENV_ADMIN: Principal = { role: 'admin', id: null };

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** True when `role` may do `action` at all (on its own links only, for an `editor`). */
export function permits(role: Role, action: Action): boolean {
  return MAY[role].has(action);
}

/** The `detail` of the `403` a key whose role lacks `action` gets; undefined when it may. */
export function refusalFor(principal: Principal, action: Action): string | undefined {
  if (!permits(principal.role, action)) return `this key's role (${principal.role}) does not allow ${WHAT[action]}`;
  if (principal.domain !== undefined && WHOLE_INSTANCE.has(action))
    return `this key acts on ${principal.domain} only, and ${WHAT[action]} concerns every domain`;
  return undefined;
}

/**
 * What concerns every domain at once: a key for one domain may do none of it, whatever its role
 * (its totals would count other domains' visits; a key it made could act on every domain).
 */
const WHOLE_INSTANCE: ReadonlySet<Action> = new Set(['read-all', 'import', 'keys', 'domains', 'webhooks']);

/**
 * Whether `principal` sees only some links: an `editor` its own, a key for one domain that
 * domain's. Such a principal reads the instance's totals as those of the links it may see.
 */
export function narrowed(principal: Principal): boolean {
  return ownLinksOnly(principal) !== undefined || principal.domain !== undefined;
}

/**
 * The author whose links `principal` is limited to: its own id for an `editor`, else undefined
 * (every link). A link of another author is answered as if it did not exist.
 */
export function ownLinksOnly(principal: Principal): string | undefined {
  return principal.role === 'editor' ? (principal.id ?? undefined) : undefined;
}
