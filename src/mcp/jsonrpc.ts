/**
 * JSON-RPC 2.0 messages as MCP uses them: classify one POSTed body, build responses. Pure
 * functions, no HTTP. MCP narrows JSON-RPC: an id is a string or an integer, never null, and
 * `params` is an object when present.
 */
import { parseJsonObject, type JsonBodyFault } from '../http/body.ts';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** In JSON-RPC's range for a server's own errors: a create past `create_rate_limit` (429). */
export const RATE_LIMITED = -32029;

export type Id = string | number;

export type Incoming =
  | { kind: 'request'; id: Id; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string }
  | { kind: 'response' }
  | { kind: 'invalid'; id: Id | null; code: typeof PARSE_ERROR | typeof INVALID_REQUEST; message: string };

export interface RpcResult {
  jsonrpc: '2.0';
  id: Id;
  result: Record<string, unknown>;
}

export interface RpcFailure {
  jsonrpc: '2.0';
  id: Id | null;
  error: { code: number; message: string; data?: Record<string, unknown> };
}

export type RpcResponse = RpcResult | RpcFailure;

/** A failure a method handler raises; it becomes the JSON-RPC error of the request. */
export class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
  }
}

/**
 * A call refused because its client created too many links (`create_rate_limit`): not a result
 * the model could act on at once, but an HTTP 429 with `Retry-After`, the JSON-RPC error as its
 * body, as every other door answers it.
 */
export class RateLimitedCall extends RpcError {
  readonly retryAfter: number;
  constructor(message: string, retryAfter: number) {
    super(RATE_LIMITED, message);
    this.name = 'RateLimitedCall';
    this.retryAfter = retryAfter;
  }
}

export function success(id: Id, result: Record<string, unknown>): RpcResult {
  return { jsonrpc: '2.0', id, result };
}

export function failure(id: Id | null, code: number, message: string, data?: Record<string, unknown>): RpcFailure {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isId(v: unknown): v is Id {
  return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
}

/** What a body that is no JSON object is, as JSON-RPC says it. */
const NO_MESSAGE: Readonly<Record<JsonBodyFault, Incoming>> = {
  empty: { kind: 'invalid', id: null, code: PARSE_ERROR, message: 'Parse error: the body is not valid JSON' },
  malformed: { kind: 'invalid', id: null, code: PARSE_ERROR, message: 'Parse error: the body is not valid JSON' },
  // Batches left JSON-RPC-over-MCP in 2025-06-18; one message per POST works with every version.
  array: { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: batches are not supported; send one JSON-RPC message per POST' },
  other: { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: a JSON-RPC message is a JSON object' },
};

/** Classifies one HTTP body, read as every door reads a JSON object. Never throws: bad input is an `invalid` outcome. */
export function parseMessage(text: string): Incoming {
  const body = parseJsonObject(text);
  if (!body.ok) return NO_MESSAGE[body.fault];
  const value = body.value;
  const hasId = Object.hasOwn(value, 'id');
  const id = hasId && isId(value['id']) ? value['id'] : null;
  const invalid = (why: string): Incoming => ({ kind: 'invalid', id, code: INVALID_REQUEST, message: `Invalid Request: ${why}` });

  if (value['jsonrpc'] !== '2.0') return invalid('jsonrpc must be "2.0"');
  if (Object.hasOwn(value, 'method')) {
    if (hasId && id === null) return invalid('id must be a string or an integer');
    const method = value['method'];
    if (typeof method !== 'string' || method === '') return invalid('method must be a non-empty string');
    const params = value['params'];
    if (params !== undefined && !isObject(params)) return invalid('params must be an object');
    if (!hasId) return { kind: 'notification', method };
    return { kind: 'request', id: id!, method, params: params ?? {} };
  }
  // A client's answer to a server request: this server never sends any, so nothing waits for it.
  // (An error response may carry id null: the answer to a message whose id could not be read.)
  const answers = id !== null || (value['id'] === null && Object.hasOwn(value, 'error'));
  if (answers && Object.hasOwn(value, 'result') !== Object.hasOwn(value, 'error')) return { kind: 'response' };
  return invalid('a message needs a method (request, notification) or an id with result or error (response)');
}
