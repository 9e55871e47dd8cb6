/**
 * fast-check arbitraries for the bodies of MCP tool calls, for fuzz-arbitraries.ts: the tools hand
 * their arguments to the service with no path rules before them, so their codes, URLs and searches
 * are where text no store can hold (a NUL, a lone surrogate) reaches a store first.
 */
import fc from 'fast-check';
import { anyChar } from './any-char.ts';

/** The arguments each tool takes (and that reach the service once its input schema lets them through). */
const TOOL_ARGS: Readonly<Record<string, readonly string[]>> = {
  shorten_url: ['url', 'code'],
  get_url: ['code'],
  lookup_url: ['url'],
  list_urls: ['api_key', 'q'],
  delete_url: ['code', 'api_key'],
  update_url: ['code', 'api_key', 'url'],
};

/**
 * A JSON-RPC `tools/call`: a tool with its own arguments, each text often holding what no store can
 * hold, sometimes `code` (a placeholder the run replaces with a live code), the admin key `k1`
 * mostly, and now and then an odd `max_visits` (an integer in or out of range, or any JSON value,
 * which the input schema may refuse).
 */
export function toolCalls(code: string): fc.Arbitrary<string> {
  const text = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('ab\u0000cdef', '\u0000', 'https://example.com/\u0000', 'a\ud800', '\udfff') },
    { weight: 2, arbitrary: fc.constantFrom(code, 'https://example.com/fuzz', 'fuzz', '') },
    { weight: 1, arbitrary: fc.string({ unit: anyChar, maxLength: 12 }) },
  );
  return fc
    .constantFrom(...Object.keys(TOOL_ARGS))
    .chain((name) =>
      fc.tuple(
        fc.constant(name),
        fc.tuple(...TOOL_ARGS[name]!.map((arg) => (arg === 'api_key' ? fc.constantFrom('k1', 'k1', 'wrong') : text).map((value) => [arg, value] as const))),
        fc.option(fc.oneof(fc.integer({ min: -1, max: 3 }), fc.jsonValue()), { freq: 6 }),
      ),
    )
    .map(([name, pairs, odd]) => {
      const args: Record<string, unknown> = Object.fromEntries(pairs);
      if (odd !== null) args['max_visits'] = odd;
      return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    });
}
