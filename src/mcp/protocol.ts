/**
 * The MCP methods this server answers (initialize, ping, tools/list, tools/call) over classified
 * JSON-RPC messages. Stateless: every message is answered on its own, so there is no session to
 * create, keep or expire, and `tools/call` works without a prior `initialize`.
 */
import { validateValue } from '../published/json-schema.ts';
import type { Logger } from '../log.ts';
import type { Service, VisitRequest } from '../links/service.ts';
import { unavailableOf } from '../links/outcomes.ts';
import { NAME, VERSION } from '../version.ts';
import { INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RateLimitedCall, RpcError, failure, parseMessage, success, type RpcResponse } from './jsonrpc.ts';
import { runChecked } from './tool-access.ts';
import { TOOLS, type Tool, type ToolResult } from './tools.ts';

/** Newest first: an unknown requested version is answered with the first. */
export const PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];

const INSTRUCTIONS =
  'A URL shortener. shorten_url creates a short link; get_url and lookup_url read one by code or by original URL; ' +
  'list_urls needs an API key whose role may read every link, get_stats one whose role may read, update_url and delete_url one whose role may edit ' +
  '(the X-API-Key header, or the api_key argument).';

/**
 * What the HTTP layer sends: a JSON-RPC response with its status, or 202 with no body; a 429
 * (`create_rate_limit`) with the seconds its `Retry-After` says.
 */
export type Outcome = { status: 200 | 400; message: RpcResponse } | { status: 429; message: RpcResponse; retryAfter: number } | { status: 202 };

export interface McpServer {
  /** `from`: the HTTP request that carried the message (its client is counted by the create limit). */
  handle(body: string, from?: VisitRequest): Promise<Outcome>;
}

/** A tool as `tools/list` declares it: everything but `run` and the role it needs. */
function declaration({ run: _run, access: _access, ...declared }: Tool): Omit<Tool, 'run' | 'access'> {
  return declared;
}

export function createMcpServer(service: Service, log: Logger, tools: readonly Tool[] = TOOLS): McpServer {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listing = { tools: tools.map(declaration) };

  function initialize(params: Record<string, unknown>): Record<string, unknown> {
    const requested = params['protocolVersion'];
    const protocolVersion = typeof requested === 'string' && PROTOCOL_VERSIONS.includes(requested) ? requested : PROTOCOL_VERSIONS[0];
    return {
      protocolVersion,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: NAME, title: 'URL shortener', version: VERSION },
      instructions: INSTRUCTIONS,
    };
  }

  async function call(params: Record<string, unknown>, from: VisitRequest | undefined): Promise<ToolResult> {
    const name = params['name'];
    if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'Invalid params: name must be the name of a tool');
    const tool = byName.get(name);
    if (!tool) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${JSON.stringify(name)}; tools/list names the tools`);
    const args = params['arguments'] ?? {};
    const errors = validateValue(tool.inputSchema, args, 'arguments');
    if (errors.length > 0) throw new RpcError(INVALID_PARAMS, `Invalid arguments for ${name}: ${errors.join('; ')}`);
    // A failure of the work is a result with `isError` (tools.ts); a throw is a bug, except the
    // store's refusal where no outcome can carry it (the redirect's decision that tells an expired
    // code from an unknown one, on a database that is down): told to the model like any other
    // failure, never an internal error.
    try {
      return await runChecked(tool, args as Record<string, unknown>, service, from);
    } catch (err) {
      const unavailable = unavailableOf(err);
      if (unavailable === undefined) throw err;
      return { content: [{ type: 'text', text: unavailable.detail }], isError: true };
    }
  }

  async function dispatch(method: string, params: Record<string, unknown>, from: VisitRequest | undefined): Promise<Record<string, unknown>> {
    switch (method) {
      case 'initialize':
        return initialize(params);
      case 'ping':
        return {};
      case 'tools/list':
        return listing;
      case 'tools/call':
        return call(params, from);
      default:
        throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
    }
  }

  return {
    async handle(body, from) {
      const message = parseMessage(body);
      switch (message.kind) {
        case 'invalid':
          // Not a message we can act on: an HTTP error status, with the JSON-RPC error as the body.
          return { status: 400, message: failure(message.id, message.code, message.message) };
        case 'notification':
        case 'response':
          return { status: 202 };
      }
      const { id, method, params } = message;
      try {
        return { status: 200, message: success(id, await dispatch(method, params, from)) };
      } catch (err) {
        if (err instanceof RateLimitedCall)
          return { status: 429, message: failure(id, err.code, err.message, { retry_after: err.retryAfter }), retryAfter: err.retryAfter };
        if (err instanceof RpcError) return { status: 200, message: failure(id, err.code, err.message) };
        log.error('unexpected error', {
          path: '/mcp',
          rpc_method: method,
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        });
        return { status: 200, message: failure(id, INTERNAL_ERROR, 'Internal error') };
      }
    },
  };
}
