/**
 * Classifying one POSTed body as a JSON-RPC message (src/mcp/jsonrpc.ts), without HTTP: every kind
 * of message MCP allows, and every way a body fails to be one, with the id a reply must echo.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INVALID_REQUEST, PARSE_ERROR, failure, parseMessage, success, type Incoming } from '../../src/mcp/jsonrpc.ts';

const rows: readonly [name: string, body: string, expected: Incoming][] = [
  ['request, integer id', '{"jsonrpc":"2.0","id":7,"method":"ping"}', { kind: 'request', id: 7, method: 'ping', params: {} }],
  ['request, id 0', '{"jsonrpc":"2.0","id":0,"method":"ping"}', { kind: 'request', id: 0, method: 'ping', params: {} }],
  [
    'request, string id',
    '{"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{"cursor":"x"}}',
    { kind: 'request', id: 'a-1', method: 'tools/list', params: { cursor: 'x' } },
  ],
  ['request, empty string id', '{"jsonrpc":"2.0","id":"","method":"ping"}', { kind: 'request', id: '', method: 'ping', params: {} }],
  ['notification', '{"jsonrpc":"2.0","method":"notifications/initialized"}', { kind: 'notification', method: 'notifications/initialized' }],
  [
    'notification with params',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
    { kind: 'notification', method: 'notifications/cancelled' },
  ],
  ['result response', '{"jsonrpc":"2.0","id":3,"result":{}}', { kind: 'response' }],
  ['error response', '{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}', { kind: 'response' }],
  ['error response with id null', '{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"no"}}', { kind: 'response' }],
  ['malformed JSON', '{"jsonrpc":"2.0",', { kind: 'invalid', id: null, code: PARSE_ERROR, message: 'Parse error: the body is not valid JSON' }],
  ['empty body', '', { kind: 'invalid', id: null, code: PARSE_ERROR, message: 'Parse error: the body is not valid JSON' }],
  [
    'batch',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: batches are not supported; send one JSON-RPC message per POST' },
  ],
  ['a number', '42', { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: a JSON-RPC message is a JSON object' }],
  ['null', 'null', { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: a JSON-RPC message is a JSON object' }],
  ['no jsonrpc, id kept', '{"id":5,"method":"ping"}', { kind: 'invalid', id: 5, code: INVALID_REQUEST, message: 'Invalid Request: jsonrpc must be "2.0"' }],
  [
    'jsonrpc 1.0',
    '{"jsonrpc":"1.0","id":"s","method":"ping"}',
    { kind: 'invalid', id: 's', code: INVALID_REQUEST, message: 'Invalid Request: jsonrpc must be "2.0"' },
  ],
  [
    'id null on a request',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: id must be a string or an integer' },
  ],
  [
    'fractional id',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: id must be a string or an integer' },
  ],
  [
    'object id',
    '{"jsonrpc":"2.0","id":{},"method":"ping"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: id must be a string or an integer' },
  ],
  [
    'method not a string',
    '{"jsonrpc":"2.0","id":2,"method":5}',
    { kind: 'invalid', id: 2, code: INVALID_REQUEST, message: 'Invalid Request: method must be a non-empty string' },
  ],
  [
    'empty method',
    '{"jsonrpc":"2.0","id":2,"method":""}',
    { kind: 'invalid', id: 2, code: INVALID_REQUEST, message: 'Invalid Request: method must be a non-empty string' },
  ],
  [
    'params an array',
    '{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}',
    { kind: 'invalid', id: 2, code: INVALID_REQUEST, message: 'Invalid Request: params must be an object' },
  ],
  [
    'params a string',
    '{"jsonrpc":"2.0","method":"x","params":"p"}',
    { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'Invalid Request: params must be an object' },
  ],
  [
    'neither method nor answer',
    '{"jsonrpc":"2.0","id":4}',
    {
      kind: 'invalid',
      id: 4,
      code: INVALID_REQUEST,
      message: 'Invalid Request: a message needs a method (request, notification) or an id with result or error (response)',
    },
  ],
  [
    'both result and error',
    '{"jsonrpc":"2.0","id":4,"result":{},"error":{}}',
    {
      kind: 'invalid',
      id: 4,
      code: INVALID_REQUEST,
      message: 'Invalid Request: a message needs a method (request, notification) or an id with result or error (response)',
    },
  ],
  [
    'result without id',
    '{"jsonrpc":"2.0","result":{}}',
    {
      kind: 'invalid',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: a message needs a method (request, notification) or an id with result or error (response)',
    },
  ],
  [
    'result with id null',
    '{"jsonrpc":"2.0","id":null,"result":{}}',
    {
      kind: 'invalid',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: a message needs a method (request, notification) or an id with result or error (response)',
    },
  ],
];

for (const [name, body, expected] of rows) {
  test(`parseMessage: ${name}`, () => {
    assert.deepEqual(parseMessage(body), expected);
  });
}

test('success and failure build exact JSON-RPC 2.0 responses', () => {
  assert.deepEqual(success(0, {}), { jsonrpc: '2.0', id: 0, result: {} });
  assert.deepEqual(failure(null, PARSE_ERROR, 'x'), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'x' } });
  assert.deepEqual(failure('s', INVALID_REQUEST, 'y'), { jsonrpc: '2.0', id: 's', error: { code: -32600, message: 'y' } });
});
