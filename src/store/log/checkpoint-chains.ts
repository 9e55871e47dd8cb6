/**
 * The start-up checkpoint's section of hash chains (`checkpoint.ts`): both indexes of the keydir
 * (`hash-chains.ts`) as they are in memory, so that a start reads them instead of building them.
 *
 * Why: at ten million links, building the two indexes (hashing every code, a counting sort of the
 * slots by bucket, linking them) was 40 % of a start from the checkpoint; reading them is
 * reading 21 bytes a link more.
 *
 * Only a checkpoint written from memory as it is (start-up, close, an import's end:
 * `writeCheckpoint`) has one, and only when its slots are memory's slots: every slot live. The
 * keydir is then loaded at memory's capacity, which the chains are of. Another one (a compaction's,
 * which renumbers slots as it copies them) has none, and the start builds the indexes as before.
 *
 * Layout, after the blocks and before the footer, each array in the machine's byte order (the
 * footer says which): the code index's heads, the URL index's heads (`capacity` each), the code
 * index's links, the URL index's links (`slots` each). The footer gives the capacity, the bytes and
 * their CRC-32.
 */
import { crc32 } from './crc32.ts';
import type { StoreFs } from './fs.ts';
import type { ChainsImage } from './hash-chains.ts';
import { readFully } from './checkpoint-block-reader.ts';

/** What the footer says of the section. */
export interface ChainsInfo {
  capacity: number;
  bytes: number;
  crc: number;
}

/** Both indexes of a keydir, as `KeydirImage.chainsImage` gives them and `adopt` takes them. */
export interface KeydirChains {
  code: ChainsImage;
  url: ChainsImage;
}

/** What a section whose bytes are not the ones written is. */
export const CHAINS_DAMAGED = 'bad checksum of its hash chains';

/** What a section whose sizes are not those of its slots is. */
export const CHAINS_MISFIT = 'hash chains of another size than its slots';

/** Whether chains of `capacity` can hold `slots` slots (a power of two, no fewer heads than slots). */
export function chainsFit(capacity: number, slots: number): boolean {
  return Number.isInteger(capacity) && capacity >= Math.max(1, slots) && capacity <= 2 ** 30 && (capacity & (capacity - 1)) === 0;
}

const bytesOf = (a: Int32Array, n = a.length): Buffer => Buffer.from(a.buffer, a.byteOffset, n * 4);

/** The section's parts, in file order, as views of the arrays (`slots` links of each index). */
const partsOf = (chains: KeydirChains, slots: number): Buffer[] => [
  bytesOf(chains.code.heads),
  bytesOf(chains.url.heads),
  bytesOf(chains.code.next, slots),
  bytesOf(chains.url.next, slots),
];

/** The section of `chains` for `slots` slots: its parts to write in order, and the footer's info. */
export function chainsSection(chains: KeydirChains, slots: number): { parts: Buffer[]; info: ChainsInfo } {
  const capacity = chains.code.heads.length;
  const parts = partsOf(chains, slots);
  let crc = 0;
  for (const part of parts) crc = crc32(part, crc);
  return { parts, info: { capacity, bytes: (2 * capacity + 2 * slots) * 4, crc } };
}

/**
 * Reads the section at `at` of the checkpoint `fd` for `slots` slots at `capacity`: the chains, or
 * what is wrong with it. The links are read into arrays of `capacity`, as the keydir grows into them.
 * `verify`: false when its checksum is checked elsewhere (`checkpoint-crc.ts`).
 */
export function readChains(fs: StoreFs, fd: number, at: number, info: ChainsInfo, slots: number, capacity: number, verify = true): KeydirChains | string {
  if (info.capacity !== capacity || info.bytes !== (2 * capacity + 2 * slots) * 4) return CHAINS_MISFIT;
  const chains = {
    code: { heads: new Int32Array(capacity), next: new Int32Array(capacity) },
    url: { heads: new Int32Array(capacity), next: new Int32Array(capacity) },
  };
  let crc = 0;
  for (const part of partsOf(chains, slots)) {
    if (!readFully(fs, fd, part, at)) return 'cut short';
    if (verify) crc = crc32(part, crc);
    at += part.length;
  }
  return !verify || crc === info.crc ? chains : CHAINS_DAMAGED;
}
