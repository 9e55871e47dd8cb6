/**
 * The edit and the delete of a live link (docs/api.md, edit and delete). An edit names the fields
 * to change in the service's own terms (`LinkEdit`); each door translates its names into them.
 * Every field is checked before the code is looked up, so a bad edit is refused whether or not the
 * link exists.
 */
import type { LinkChanges, LinkRecord, LinkStore } from '../store/link-store.ts';
import type { KeyOf } from './domains.ts';
import { NOT_FOUND, outage, refused, type Found, type Invalid, type NotFound, type Unavailable } from './outcomes.ts';
import type { UrlRecord } from './record.ts';
import { Refusal } from './refusal.ts';
import { checkRouting, hashedChange, type RoutingInput } from './routing-input.ts';
import { checkUrl, type UrlRules } from './url-rules.ts';
import { checkMaxVisits, checkRetentionChange, checkTags, checkTitle } from './validate.ts';

export type UpdateOutcome = Found | Invalid | NotFound | Unavailable;
export type RemoveOutcome = { ok: true } | Invalid | NotFound | Unavailable;

/**
 * The fields an edit changes, as the door received them: absent (or undefined) ones stay, each
 * given one is checked as on a create. The code, the creation time and the visit count never change.
 */
export interface LinkEdit {
  url?: unknown;
  /** An integer 0–36500 counted from the creation; null is refused (0 is "forever"). */
  retentionDays?: unknown;
  /** null clears the limit. */
  maxVisits?: unknown;
  /** null or '' clears the title. */
  title?: unknown;
  /** An array of tags replacing them all; [] clears them, null is refused. */
  tags?: unknown;
  /** Routing fields (`routing-input.ts`): each given replaces its part, null removes it. */
  routing?: RoutingInput | undefined;
}

/** A checked edit: the store's changes, and a new password still to hash. */
export interface CheckedEdit {
  changes: LinkChanges;
  password: string | undefined;
}

/** An edit by the rules, as the store's changes; the fields in the order their refusals are told. */
export function checkEdit(edit: LinkEdit, urlRules: UrlRules): LinkChanges | Refusal {
  const changes: LinkChanges = {};
  if (edit.url !== undefined) {
    const url = checkUrl(edit.url, urlRules);
    if (url instanceof Refusal) return url;
    changes.url = url;
  }
  if (edit.retentionDays !== undefined) {
    const retentionDays = checkRetentionChange(edit.retentionDays);
    if (retentionDays instanceof Refusal) return retentionDays;
    changes.retentionDays = retentionDays;
  }
  if (edit.maxVisits !== undefined) {
    const maxVisits = checkMaxVisits(edit.maxVisits);
    if (maxVisits instanceof Refusal) return maxVisits;
    changes.maxVisits = maxVisits;
  }
  if (edit.title !== undefined) {
    const title = checkTitle(edit.title);
    if (title instanceof Refusal) return title;
    changes.title = title;
  }
  if (edit.tags !== undefined) {
    if (edit.tags === null) return new Refusal('tags must be an array; [] clears them');
    const tags = checkTags(edit.tags);
    if (tags instanceof Refusal) return tags;
    changes.tags = tags;
  }
  return changes;
}

/** `checkEdit` with the routing fields: the changes, the new password apart. */
export function checkLinkEdit(edit: LinkEdit, urlRules: UrlRules): CheckedEdit | Refusal {
  const changes = checkEdit(edit, urlRules);
  if (changes instanceof Refusal || edit.routing === undefined) return changes instanceof Refusal ? changes : { changes, password: undefined };
  const routing = checkRouting(edit.routing, urlRules);
  if (routing instanceof Refusal) return routing;
  if (Object.keys(routing.change).length > 0 || routing.password !== undefined) changes.routing = routing.change;
  return { changes, password: routing.password };
}

export interface EditDeps {
  store: LinkStore;
  urlRules: UrlRules;
  /** Unix seconds now. */
  seconds: () => number;
  view: (record: LinkRecord) => UrlRecord;
  keyOf: KeyOf;
}

const REMOVED: RemoveOutcome = { ok: true };

export function createEdits({ store, urlRules, seconds, view, keyOf }: EditDeps) {
  return {
    /**
     * Edits a live link: a visit limit of null clears the limit, a title of null the title, tags of
     * [] the tags; a retention counts from the creation, so it may expire the link at once.
     */
    async update(code: string, edit: LinkEdit, domain?: unknown): Promise<UpdateOutcome> {
      const checked = checkLinkEdit(edit, urlRules);
      if (checked instanceof Refusal) return refused(checked);
      const key = keyOf(code, domain);
      if (typeof key !== 'string') return key;
      const { changes, password } = checked;
      if (password !== undefined) changes.routing = await hashedChange({ change: changes.routing ?? {}, password });
      try {
        const record = await store.update(key, changes, seconds());
        return record === undefined ? NOT_FOUND : { ok: true, record: view(record) };
      } catch (err) {
        return outage(err);
      }
    },

    /** Not found when there is no such live code: an expired link is gone for every API, delete included. */
    async remove(code: string, domain?: unknown): Promise<RemoveOutcome> {
      const key = keyOf(code, domain);
      if (typeof key !== 'string') return key;
      try {
        return (await store.delete(key, seconds())) ? REMOVED : NOT_FOUND;
      } catch (err) {
        return outage(err);
      }
    },
  };
}
