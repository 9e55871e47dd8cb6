/**
 * The body of an edit (docs/api.md): a JSON object and nothing else. A create also reads forms
 * (`http/body.ts`); an edit names typed fields, `null` included, which only JSON can say.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../errors.ts';
import { mediaType, readBody } from '../http/body.ts';

/** Reads the body within `limit` (413), refuses another content type (415) and anything but one JSON object (400). */
export async function readJsonObject(req: IncomingMessage, limit: number): Promise<Readonly<Record<string, unknown>>> {
  // Read first, like a create: the upload leaves the socket whatever the answer.
  const body = await readBody(req, limit);
  const type = mediaType(req.headers['content-type']);
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(
      415,
      type ? `unsupported content type ${type}; an edit is sent as application/json` : 'an edit needs a body with Content-Type: application/json',
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'request body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'request body must be a JSON object');
  return value as Record<string, unknown>;
}
