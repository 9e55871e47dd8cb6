/**
 * Request bodies: read with a hard size limit while streaming, then decoded by content type. The
 * one reader of a body that must hold a JSON object is here too (`readJsonObject`): REST's create
 * and edit, MCP's messages and Shlink's bodies read it alike, and each door answers what is wrong
 * with one in its own shape.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
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

/** The body limit of `POST /api/import` (docs/api.md): its own, far above the others. */
export const IMPORT_BODY_LIMIT = 256 * 1024 * 1024;

/**
 * Sockets whose request body is being streamed by `streamBody`, with the time its last bytes
 * arrived: `spareLongUploads` exempts them from the server's request timeout while bytes keep
 * arriving.
 */
const uploads = new WeakMap<Socket, { last: number }>();

/**
 * The body in the chunks it arrives in, never held whole, for a consumer that reads it at its own
 * pace (the request is paused in between: TCP slows the sender down). Throws 413 as soon as it
 * passes `limit` (a declared Content-Length over it before reading a byte); the connection is then
 * closed after the answer, the rest of the upload unread.
 *
 * A long upload is legitimate here (a 256 MiB import on a slow link): while this reads, the
 * request timeout of `main.ts` does not cut the request as long as bytes keep arriving (see
 * `spareLongUploads`).
 */
export async function* streamBody(req: IncomingMessage, limit: number): AsyncGenerator<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw uploadTooLarge(limit);
  const { socket } = req;
  const mark = { last: Date.now() };
  uploads.set(socket, mark);
  // Events, not `for await` on the request: leaving that loop early destroys the socket, and the
  // 413 or 503 that stopped the reading would never reach the client.
  const queue: Buffer[] = [];
  let ended = false;
  let failed: Error | undefined;
  let wake: (() => void) | undefined;
  const onData = (chunk: Buffer): void => {
    mark.last = Date.now();
    queue.push(chunk);
    req.pause();
    wake?.();
  };
  const onEnd = (): void => {
    ended = true;
    wake?.();
  };
  const onClose = (): void => {
    if (!req.complete) failed ??= new Error('the client closed the connection before the body ended');
    wake?.();
  };
  const onError = (err: Error): void => {
    failed ??= err;
    wake?.();
  };
  req.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onError);
  let total = 0;
  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk !== undefined) {
        total += chunk.length;
        if (total > limit) throw uploadTooLarge(limit);
        yield chunk;
        continue;
      }
      if (ended) return;
      if (failed) throw new HttpError(400, `could not read the request body: ${failed.message}`);
      const next = new Promise<void>((resolve) => (wake = resolve));
      req.resume();
      await next;
      wake = undefined;
    }
  } finally {
    req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onError);
    // Unread bytes stay unread: the caller answers with `Connection: close`.
    req.pause();
    uploads.delete(socket);
  }
}

/** A 413 of a streamed upload (the dispatch closes the connection after it, the rest unread). */
function uploadTooLarge(limit: number): HttpError {
  const MiB = 1024 * 1024;
  return new HttpError(413, `request body is larger than ${limit % MiB === 0 ? `${limit / MiB} MiB` : `${limit} bytes`}`);
}

/** node:http's own answers to a client error (`_http_server.js`), written when it has no listener. */
const CLIENT_ERROR_ANSWERS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

/**
 * The one exception to `request_timeout_ms` (docs/operations.md): a body read by `streamBody`
 * (the import) is not cut at the request timeout while its bytes keep arriving; it is cut once no
 * byte came for `idleMs` (the request timeout again), with the same `408` node:http sends.
 *
 * node:http reports an expired request once, as a `clientError`; with a listener installed it
 * leaves the answer to the listener, so this answers every other client error exactly as node:http
 * would have. A spared upload is then watched here until its body ends.
 */
export function spareLongUploads(server: Server, idleMs: number): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const upload = uploads.get(socket);
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && upload !== undefined) return watchUpload(socket, upload, idleMs, err);
    answerClientError(socket, err);
  });
}

function answerClientError(socket: Socket, err: NodeJS.ErrnoException): void {
  const res = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !res?.headersSent) socket.write(CLIENT_ERROR_ANSWERS[err.code ?? ''] ?? BAD_REQUEST);
  socket.destroy(err);
}

function watchUpload(socket: Socket, upload: { last: number }, idleMs: number, err: NodeJS.ErrnoException): void {
  const check = (): void => {
    if (socket.destroyed || uploads.get(socket) !== upload) return;
    const idle = Date.now() - upload.last;
    if (idle >= idleMs) return answerClientError(socket, err);
    setTimeout(check, idleMs - idle).unref();
  };
  check();
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

export type JsonObject = Readonly<Record<string, unknown>>;

/**
 * What is wrong with a body that is no JSON object: `empty` (nothing but white space), `malformed`
 * (no JSON text), `array` or `other` (JSON, but an array or a scalar).
 */
export type JsonBodyFault = 'empty' | 'malformed' | 'array' | 'other';

export type JsonBody = { ok: true; value: JsonObject } | { ok: false; fault: JsonBodyFault };

/** `text` as one JSON object, or what is wrong with it. Never throws. */
export function parseJsonObject(text: string): JsonBody {
  if (text.trim() === '') return { ok: false, fault: 'empty' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, fault: 'malformed' };
  }
  if (Array.isArray(value)) return { ok: false, fault: 'array' };
  if (typeof value !== 'object' || value === null) return { ok: false, fault: 'other' };
  return { ok: true, value: value as JsonObject };
}

/**
 * The body read within `limit` (over it, `readBody`'s 413), decoded as UTF-8 and parsed as one
 * JSON object, whatever its content type: a door that cares checks the type itself.
 */
export async function readJsonObject(req: IncomingMessage, limit: number): Promise<JsonBody> {
  return parseJsonObject((await readBody(req, limit)).toString('utf8'));
}

/** The REST API's 400 for a body that is no JSON object (docs/api.md, errors). */
export function jsonBodyError(fault: JsonBodyFault): HttpError {
  if (fault === 'empty' || fault === 'malformed') return new HttpError(400, 'request body is not valid JSON');
  return new HttpError(400, 'request body must be a JSON object');
}

/** Named fields of a body: a JSON object or a url-encoded form. Empty body → no fields. */
export interface Fields {
  /** A field's value; of a field a form repeats, the first. */
  get(name: string): unknown;
  /**
   * A repeatable field (tags): in a form every value it is given, in order (undefined when
   * absent); in JSON the value as sent.
   */
  all(name: string): unknown;
  /** True when values are text (a form), false when typed (JSON). */
  textual: boolean;
}

export function parseFields(body: Buffer, contentType: string | undefined): Fields {
  if (body.length === 0) return { get: () => undefined, all: () => undefined, textual: true };
  const type = mediaType(contentType);
  if (type === 'application/json' || type.endsWith('+json')) {
    const parsed = parseJsonObject(body.toString('utf8'));
    if (!parsed.ok) throw jsonBodyError(parsed.fault);
    const obj = parsed.value;
    const get = (name: string): unknown => (Object.hasOwn(obj, name) ? obj[name] : undefined);
    return { get, all: get, textual: false };
  }
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(body.toString('utf8'));
    return {
      get: (name) => form.get(name) ?? undefined,
      all: (name) => (form.has(name) ? form.getAll(name) : undefined),
      textual: true,
    };
  }
  throw new HttpError(
    415,
    type
      ? `unsupported content type ${type}; send application/json or application/x-www-form-urlencoded`
      : 'a request body needs a Content-Type: application/json or application/x-www-form-urlencoded',
  );
}
