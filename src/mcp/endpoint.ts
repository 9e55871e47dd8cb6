/**
 * `POST /mcp`: the Streamable HTTP transport of MCP (docs/mcp.md), stateless and JSON-only. The
 * checks run in the order of what they protect: the Origin (DNS rebinding) before anything is
 * read, then the protocol version and media types, then the body with the usual 64 KiB limit.
 * Every answer goes through the responder, so it keeps the CORS and security headers; no answer
 * ever carries `Mcp-Session-Id`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mediaType, readBody } from '../http/body.ts';
import { HttpError } from '../errors.ts';
import { flatten, retryAfter } from '../http/headers.ts';
import type { Logger } from '../log.ts';
import type { Responder } from '../http/respond.ts';
import type { Service } from '../links/service.ts';
import { PROTOCOL_VERSIONS, createMcpServer } from './protocol.ts';

export interface McpEndpointOptions {
  service: Service;
  baseUrl: string;
  /** Browser origins allowed besides base_url's own (MCP_ALLOWED_ORIGINS), already `URL.origin`-shaped. */
  allowedOrigins: readonly string[];
  log: Logger;
  reply: Responder;
  /** Largest accepted request body, bytes (`max_body_bytes`). */
  maxBodyBytes: number;
}

/**
 * True when a JSON answer is acceptable. A missing Accept accepts anything (RFC 9110); clients
 * send `application/json, text/event-stream` and get JSON, the one form this server answers in.
 */
function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const refused = params.some((p) => /^q=0(\.0{0,3})?$/.test(p));
    return !refused && (type === 'application/json' || type === 'application/*' || type === '*/*');
  });
}

export function createMcpEndpoint(options: McpEndpointOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { reply } = options;
  const server = createMcpServer(options.service, options.log);
  // Exact comparison: browsers send the serialized origin, and config stored `URL.origin`s.
  const origins = new Set([new URL(options.baseUrl).origin, ...options.allowedOrigins]);

  return async function mcp(req, res) {
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin)) {
      throw new HttpError(403, 'this Origin may not call /mcp; add it to MCP_ALLOWED_ORIGINS to allow it');
    }
    const version = req.headers['mcp-protocol-version'];
    if (version !== undefined && (typeof version !== 'string' || !PROTOCOL_VERSIONS.includes(version))) {
      throw new HttpError(400, `unsupported MCP-Protocol-Version ${JSON.stringify(version)}; this server speaks ${PROTOCOL_VERSIONS.join(', ')}`);
    }
    if (mediaType(req.headers['content-type']) !== 'application/json') {
      throw new HttpError(415, 'POST /mcp takes one JSON-RPC message with Content-Type: application/json');
    }
    if (!acceptsJson(req.headers.accept)) {
      throw new HttpError(406, 'POST /mcp answers in application/json; send Accept: application/json, text/event-stream');
    }
    const outcome = await server.handle((await readBody(req, options.maxBodyBytes)).toString('utf8'), req);
    if (outcome.status === 202) return reply.empty(res, 202);
    reply.json(res, outcome.status, outcome.message, outcome.status === 429 ? flatten([retryAfter(outcome.retryAfter)]) : []);
  };
}
