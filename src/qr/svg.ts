/**
 * A QR symbol as SVG: black modules on a white background with the 4-module quiet zone readers
 * need, in a `viewBox` of module units and no fixed size, so it scales to any size sharply.
 */
import { encodeQr, type QrSymbol } from './encode.ts';

/** The light margin around the symbol, in modules (ISO/IEC 18004's minimum). */
export const QUIET_ZONE = 4;

/**
 * One path for every dark module: each horizontal run of dark modules is one rectangle
 * (`M x y h len v1 h -len z`): about 3 kB for a short URL, 140 kB at version 40.
 */
export function symbolPath(symbol: QrSymbol): string {
  const parts: string[] = [];
  const n = symbol.size;
  for (let row = 0; row < n; row++) {
    let col = 0;
    while (col < n) {
      if (!symbol.modules[row * n + col]) {
        col++;
        continue;
      }
      const start = col;
      while (col < n && symbol.modules[row * n + col]) col++;
      parts.push(`M${start + QUIET_ZONE} ${row + QUIET_ZONE}h${col - start}v1h-${col - start}z`);
    }
  }
  return parts.join('');
}

/** The SVG document of `text`'s QR code (byte mode, level M, else L). Throws a RangeError if it is too long. */
export function qrSvg(text: string): string {
  return symbolSvg(encodeQr(text));
}

/** The SVG document of an encoded symbol. */
export function symbolSvg(symbol: QrSymbol): string {
  const side = symbol.size + 2 * QUIET_ZONE;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges">` +
    `<title>QR code</title>` +
    `<rect width="${side}" height="${side}" fill="#fff"/>` +
    `<path fill="#000" d="${symbolPath(symbol)}"/>` +
    `</svg>\n`
  );
}
