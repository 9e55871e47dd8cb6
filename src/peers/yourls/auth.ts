/**
 * YOURLS' API credential (docs/compat.md#yourls-api): which API key a request's "secret signature
 * token" presents. `signature=<key>` presents the key itself — any key of the service, a key of
 * `api_keys` or a stored key — which the service then recognizes and holds to its role.
 * `timestamp=<unix seconds>&signature=<hash>` presents the key of `api_keys` whose hash it is: the
 * hash of the timestamp and the key concatenated, either way round (YOURLS accepts both), with
 * `hash` = `md5` (the default), `sha1` or `sha256`, and the timestamp within 12 hours of now,
 * either side (YOURLS' nonce life). A stored key cannot sign: the store keeps only a digest of its
 * secret, never the secret a hash would be made of. Every comparison is in constant time and
 * against every key. `username`/`password` are never a credential here.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { digestSecret } from '../../secrets.ts';
import { given, phpInt } from './params.ts';

/** How far a signed timestamp may be from now, in seconds (YOURLS' `YOURLS_NONCE_LIFE`). */
export const NONCE_LIFE = 12 * 3600;

export const HASHES: readonly string[] = ['md5', 'sha1', 'sha256'];

/**
 * The key the request's parameters present, or undefined when they carry no credential (none, an
 * empty one, a timestamp out of its life or a hash that is no key's); `now` in Unix seconds.
 */
export function signatureKey(params: ReadonlyMap<string, string>, apiKeys: readonly string[], now: number): string | undefined {
  const signature = params.get('signature');
  if (!given(signature)) return undefined;
  const timestamp = params.get('timestamp');
  // YOURLS takes the plain signature only when no timestamp is sent at all; an empty one fails.
  if (timestamp === undefined) return signature;
  if (!given(timestamp) || Math.abs(now - phpInt(timestamp)) >= NONCE_LIFE) return undefined;
  const hash = params.get('hash') ?? 'md5';
  if (!HASHES.includes(hash)) return undefined;
  // Every key, both orders, always: the time tells neither which key signed nor how many exist.
  const presented = digestSecret(signature);
  let signer: string | undefined;
  for (const key of apiKeys) {
    for (const text of [timestamp + key, key + timestamp]) if (timingSafeEqual(presented, digestSecret(hex(hash, text)))) signer = key;
  }
  return signer;
}

function hex(algorithm: string, text: string): string {
  return createHash(algorithm).update(text).digest('hex');
}
