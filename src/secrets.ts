/**
 * Comparing secrets (the bearer token, the API keys) in constant time. Both sides become SHA-256
 * digests: equal lengths for `timingSafeEqual`, so neither a secret's length nor the length of a
 * matching prefix shows in the time a refusal takes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** A secret as it is kept for comparing: its digest, computed once when the service starts. */
export type SecretDigest = Buffer;

export function digestSecret(s: string): SecretDigest {
  return createHash('sha256').update(s).digest();
}

/**
 * True when `candidate` equals one of `secrets`, exactly (no trimming, no case folding). It is
 * compared with every one of them, so the time does not tell which one matched, or how many exist.
 */
export function matchesSecret(candidate: string, secrets: readonly SecretDigest[]): boolean {
  const d = digestSecret(candidate);
  let ok = false;
  for (const s of secrets) ok = timingSafeEqual(d, s) || ok;
  return ok;
}
