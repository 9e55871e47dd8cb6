/**
 * The server limits as a pure mapping (http-options.ts): settings → `createServer` options and
 * `maxConnections`, checked without a socket, and accepted as such by node:http.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { defaults } from '../../src/config/settings.ts';
import { checkingInterval, serverOptions } from '../../src/cli/http-options.ts';

test('the defaults: 10 s headers, 30 s request, 5 s keep-alive, 16 KiB headers, 1024 connections, checked every second', () => {
  assert.deepEqual(serverOptions(defaults()), {
    options: {
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16_384,
      connectionsCheckingInterval: 1000,
    },
    maxConnections: 1024,
  });
});

test('each setting maps to its option', () => {
  const limits = { headersTimeoutMs: 1500, requestTimeoutMs: 4000, keepAliveTimeoutMs: 700, maxHeaderBytes: 2048, maxConnections: 7 };
  assert.deepEqual(serverOptions(limits), {
    options: { headersTimeout: 1500, requestTimeout: 4000, keepAliveTimeout: 700, maxHeaderSize: 2048, connectionsCheckingInterval: 150 },
    maxConnections: 7,
  });
});

test('checkingInterval: a tenth of the shorter timeout, between 25 ms and 1 s', () => {
  assert.equal(checkingInterval({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 }), 1000);
  assert.equal(checkingInterval({ headersTimeoutMs: 600_000, requestTimeoutMs: 3_600_000 }), 1000);
  assert.equal(checkingInterval({ headersTimeoutMs: 1000, requestTimeoutMs: 2000 }), 100);
  assert.equal(checkingInterval({ headersTimeoutMs: 100, requestTimeoutMs: 100 }), 25);
});

test('node:http takes the options as given', () => {
  const limits = { headersTimeoutMs: 1500, requestTimeoutMs: 4000, keepAliveTimeoutMs: 700, maxHeaderBytes: 2048, maxConnections: 7 };
  const server = createServer(serverOptions(limits).options);
  assert.equal(server.headersTimeout, 1500);
  assert.equal(server.requestTimeout, 4000);
  assert.equal(server.keepAliveTimeout, 700);
  assert.equal((server as unknown as { maxHeaderSize: number }).maxHeaderSize, 2048, 'not in the types, but kept by Node');
});
