/**
 * CRC-32 (IEEE, the zlib polynomial) of a byte range. Node ships a native one from 20.15 on;
 * older 20.x lines get the table-driven fallback, which produces the same values.
 */
import * as zlib from 'node:zlib';

const TABLE = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  TABLE[n] = c;
}

/** `value`: the CRC-32 of the bytes before these, to go on from (0 to start). */
export function crc32Fallback(bytes: Uint8Array, value = 0): number {
  let crc = ~value;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

type Crc = (bytes: Uint8Array, value?: number) => number;
const native = (zlib as { crc32?: Crc }).crc32;

export const crc32: Crc = native ?? crc32Fallback;
