/**
 * Request bodies: read with a hard size limit while streaming, then decoded by content type.
 */
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../errors.ts';

/**
 * Reads the whole body, or throws 413 as soon as it passes `limit` (a declared Content-Length over
 * the limit is refused before reading a byte). Returns an empty buffer when there is no body.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        failed = true;
        req.off('data', onData);
        // Stop reading: the rest of the upload is not our problem, the 413 is sent now.
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => failed || resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', (err) => failed || reject(new HttpError(400, `could not read the request body: ${err.message}`)));
  });
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `request body is larger than ${limit % 1024 === 0 ? `${limit / 1024} KiB` : `${limit} bytes`}`);
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** Named fields of a body: a JSON object or a url-encoded form. Empty body → no fields. */
export interface Fields {
  get(name: string): unknown;
  /** True when values are text (a form), false when typed (JSON). */
  textual: boolean;
}

export function parseFields(body: Buffer, contentType: string | undefined): Fields {
  if (body.length === 0) return { get: () => undefined, textual: true };
  const type = mediaType(contentType);
  if (type === 'application/json' || type.endsWith('+json')) {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      throw new HttpError(400, 'request body is not valid JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new HttpError(400, 'request body must be a JSON object');
    }
    const obj = value as Record<string, unknown>;
    return { get: (name) => (Object.hasOwn(obj, name) ? obj[name] : undefined), textual: false };
  }
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(body.toString('utf8'));
    return { get: (name) => form.get(name) ?? undefined, textual: true };
  }
  throw new HttpError(
    415,
    type ? `unsupported content type ${type}; send application/json or application/x-www-form-urlencoded` : 'a request body needs a Content-Type: application/json or application/x-www-form-urlencoded',
  );
}
