/**
 * The body of an edit (docs/api.md): a JSON object and nothing else, whose names are the record's.
 * A create also reads forms (`http/body.ts`); an edit names typed fields, `null` included, which
 * only JSON can say. The names become the service's own (`LinkEdit`) here, in one table; any other
 * name is refused, so a client that misspells a field learns it instead of changing nothing.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../errors.ts';
import { jsonBodyError, mediaType, readJsonObject, type JsonObject } from '../http/body.ts';
import { ROUTING_FIELDS, routingInputOf } from '../links/routing-input.ts';
import type { LinkEdit } from '../links/service.ts';

/** The fields an edit may hold, by their JSON names. A `Map`: the names are the request's text. */
const EDITABLE: ReadonlyMap<string, keyof LinkEdit> = new Map([
  ['url', 'url'],
  ['retention_days', 'retentionDays'],
  ['max_visits', 'maxVisits'],
  ['title', 'title'],
  ['tags', 'tags'],
] as const);

/** A JSON edit in the service's terms, or the reason it names a field that cannot change. */
export function editOf(body: JsonObject): LinkEdit | string {
  const edit: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    const field = EDITABLE.get(name);
    if (field !== undefined) edit[field] = value;
    else if (!ROUTING_FIELDS.has(name))
      return `${JSON.stringify(name)} cannot be changed; an edit may hold ${[...EDITABLE.keys(), ...ROUTING_FIELDS.keys()].join(', ')}`;
  }
  const routing = routingInputOf((name) => body[name]);
  if (routing !== undefined) edit['routing'] = routing;
  return edit as LinkEdit;
}

/**
 * Reads the body within `limit` (413), refuses another content type (415), anything but one JSON
 * object (400) and a field no edit may hold (400).
 */
export async function readEdit(req: IncomingMessage, limit: number): Promise<LinkEdit> {
  // Read first, like a create: the upload leaves the socket whatever the answer.
  const body = await readJsonObject(req, limit);
  const type = mediaType(req.headers['content-type']);
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(
      415,
      type ? `unsupported content type ${type}; an edit is sent as application/json` : 'an edit needs a body with Content-Type: application/json',
    );
  }
  if (!body.ok) throw jsonBodyError(body.fault);
  const edit = editOf(body.value);
  if (typeof edit === 'string') throw new HttpError(400, edit);
  return edit;
}
