/**
 * Raw HTTP/1.1 over a `net` socket: the bytes go out exactly as given (a client library would
 * normalize or refuse many of them), and every response that comes back is parsed, several if the
 * input held pipelined requests.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: string;
}

export interface RawReply {
  responses: RawResponse[];
  /** Everything the server sent, latin1-decoded (one char per byte). */
  text: string;
  /** `closed`: the server (or the half-close) ended the exchange; `timeout`: it did not end in time. */
  end: 'closed' | 'timeout';
  /** A socket error (ECONNRESET when the server drops a connection), if any. */
  error: string | undefined;
  ms: number;
}

export interface RawOptions {
  /** Give up (and report `timeout`) after this long; default 5000 ms. */
  timeoutMs?: number;
  /**
   * Half-close after this many ms if the server has not closed the connection by then (default
   * 250), so an incomplete request ends. Not at once: Node aborts a request whose client
   * half-closed before its (asynchronous) answer was written, so async handlers would never answer.
   */
  halfCloseAfterMs?: number;
  /** The first request's method: a response to HEAD has a Content-Length but no body. */
  head?: boolean;
}

/** An open raw connection: what the server sent so far and when it closed it. */
export interface RawConnection {
  socket: Socket;
  /** Once the server closed the connection (or `timeoutMs` passed): everything it sent, and when (ms after connecting). */
  closed: Promise<{ text: string; ms: number }>;
}

/** Connects, sends `head` at once and collects the answer until the server closes (or `timeoutMs`, then destroys). */
export function openRaw(port: number, head: string, timeoutMs = Infinity): RawConnection {
  const socket = connect(port, '127.0.0.1');
  const started = Date.now();
  let text = '';
  socket.setEncoding('latin1').on('data', (c: string) => (text += c));
  socket.on('error', () => {});
  socket.write(head);
  const closed = new Promise<{ text: string; ms: number }>((resolve) => {
    const done = (): void => resolve({ text, ms: Date.now() - started });
    const timer = Number.isFinite(timeoutMs) ? setTimeout(() => (socket.destroy(), done()), timeoutMs) : undefined;
    socket.once('close', () => (clearTimeout(timer), done()));
  });
  return { socket, closed };
}

export function sendRaw(port: number, data: string | Buffer, options: RawOptions = {}): Promise<RawReply> {
  const { timeoutMs = 5000, halfCloseAfterMs = 250, head = false } = options;
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let end: RawReply['end'] = 'closed';
    const timer = setTimeout(() => {
      end = 'timeout';
      socket.destroy();
    }, timeoutMs);
    const halfClose = setTimeout(() => socket.end(), halfCloseAfterMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => {
      clearTimeout(timer);
      clearTimeout(halfClose);
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ responses: parseResponses(text, head), text, end, error, ms: Date.now() - started });
    });
    // A write to a connection the server already closed is reported by 'error' and 'close'.
    socket.write(data);
  });
}

/**
 * Parses a stream of responses. Bodies are delimited by Content-Length or chunked encoding; a
 * response to HEAD (`head` for the first one; for later ones seen when the next status line starts
 * right where a body would) has none. Stops at the first thing that is not a response.
 */
export function parseResponses(text: string, head = false): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  let first = true;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const lines = text.slice(at, headEnd).split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
    if (!m) break;
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon === -1) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    let bodyStart = headEnd + 4;
    let body = '';
    const noBody = (first && head) || status === 204 || status === 304 || (status >= 100 && status < 200);
    if (!noBody && headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      for (;;) {
        const lineEnd = text.indexOf('\r\n', bodyStart);
        if (lineEnd === -1) return [...out, { status, headers, body }];
        const size = parseInt(text.slice(bodyStart, lineEnd), 16);
        if (!Number.isFinite(size)) return [...out, { status, headers, body }];
        bodyStart = lineEnd + 2;
        if (size === 0) {
          bodyStart = text.indexOf('\r\n', bodyStart) + 2 || text.length;
          break;
        }
        body += text.slice(bodyStart, bodyStart + size);
        bodyStart += size + 2;
      }
    } else if (!noBody && headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      const rest = text.slice(bodyStart);
      // A HEAD response later in a pipeline: the next status line follows the headers directly
      // (no body this service sends starts like a status line).
      if (!rest.startsWith('HTTP/1.')) {
        body = rest.slice(0, length);
        bodyStart += body.length;
      }
    }
    out.push({ status, headers, body });
    at = bodyStart;
    first = false;
  }
  return out;
}
