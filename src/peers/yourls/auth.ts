/**
 * YOURLS' API credential (docs/compat.md#yourls-api), with an admin key of `api_keys` as YOURLS'
 * secret signature token: `signature=<key>`, or `timestamp=<unix seconds>&signature=<hash>` where
 * the hash is of the timestamp and the key concatenated, either way round (YOURLS accepts both),
 * with `hash` = `md5` (the default), `sha1` or `sha256`, and the timestamp within 12 hours of now,
 * either side (YOURLS' nonce life). Every comparison is in constant time and against every key.
 * `username`/`password` are never a credential here.
 */
import { createHash } from 'node:crypto';
import { digestSecret, matchesSecret } from '../../secrets.ts';
import { given, phpInt } from './params.ts';

/** How far a signed timestamp may be from now, in seconds (YOURLS' `YOURLS_NONCE_LIFE`). */
export const NONCE_LIFE = 12 * 3600;

export const HASHES: readonly string[] = ['md5', 'sha1', 'sha256'];

export interface Credentials {
  keys: readonly string[];
  /** The service's constant-time test of one key (`service.isAdminKey`). */
  isAdminKey(key: string): boolean;
}

/** True when the request's parameters carry a valid credential; `now` in Unix seconds. */
export function signed(params: ReadonlyMap<string, string>, credentials: Credentials, now: number): boolean {
  const signature = params.get('signature');
  if (!given(signature)) return false;
  const timestamp = params.get('timestamp');
  // YOURLS takes the plain signature only when no timestamp is sent at all; an empty one fails.
  if (timestamp === undefined) return credentials.isAdminKey(signature);
  if (!given(timestamp) || Math.abs(now - phpInt(timestamp)) >= NONCE_LIFE) return false;
  const hash = params.get('hash') ?? 'md5';
  if (!HASHES.includes(hash) || credentials.keys.length === 0) return false;
  const expected = credentials.keys.flatMap((key) => [digestSecret(hex(hash, timestamp + key)), digestSecret(hex(hash, key + timestamp))]);
  return matchesSecret(signature, expected);
}

function hex(algorithm: string, text: string): string {
  return createHash(algorithm).update(text).digest('hex');
}
