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
 * visits; `read-all`: list, export or count over every link; `edit` or delete links; `import`;
 * manage `keys` (and later domains and webhooks).
 */
export type Action = 'create' | 'read' | 'read-all' | 'edit' | 'import' | 'keys';

/**
 * The roles table: what each role may do. An `editor` may read and edit only its own links
 * (`ownLinksOnly`); the reads over every link (lists, exports, the stats of all links) do not yet
 * narrow to one author, so an editor is refused them rather than shown other authors' links.
 */
const MAY: Readonly<Record<Role, ReadonlySet<Action>>> = {
  creator: new Set(['create']),
  viewer: new Set(['read', 'read-all']),
  editor: new Set(['create', 'read', 'edit']),
  admin: new Set(['create', 'read', 'read-all', 'edit', 'import', 'keys']),
};

/** How a refusal names each action: "this key's role (viewer) does not allow creating links". */
const WHAT: Readonly<Record<Action, string>> = {
  create: 'creating links',
  read: 'reading links, their stats or their visits',
  'read-all': 'listing, exporting or counting over every link',
  edit: 'editing or deleting links',
  import: 'importing',
  keys: 'managing keys',
};

/**
 * The key a request presented, once recognized: its role, and the id of the stored key (`null`
 * for a key of `API_KEYS`, which is an admin key and is never stored).
 */
export interface Principal {
  readonly role: Role;
  readonly id: string | null;
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
  return permits(principal.role, action) ? undefined : `this key's role (${principal.role}) does not allow ${WHAT[action]}`;
}

/**
 * The author whose links `principal` is limited to: its own id for an `editor`, else undefined
 * (every link). A link of another author is answered as if it did not exist.
 */
export function ownLinksOnly(principal: Principal): string | undefined {
  return principal.role === 'editor' ? (principal.id ?? undefined) : undefined;
}
