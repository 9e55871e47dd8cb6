/**
 * The text fields of a `multipart/form-data` body (RFC 7578), for the clients that send forms so
 * (ShareX posts to YOURLS' API this way). Parts that carry a `filename` are files, which no route
 * takes, and are left out. A pure function over the body `readBody` read whole, within its limit.
 */

/** The `boundary` parameter of a `multipart/form-data` Content-Type, or undefined. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType ?? '');
  return match === null ? undefined : (match[1] ?? match[2]);
}

/**
 * The fields of `body` in the order they came, each named once: a later part of the same name
 * replaces an earlier one, as PHP reads a form. A body that breaks off or holds no delimiter gives
 * the fields read until then (a client's broken form is an ordinary outcome, never a throw).
 */
export function multipartFields(body: Buffer, boundary: string): Map<string, string> {
  const fields = new Map<string, string>();
  const delimiter = Buffer.from(`--${boundary}`);
  // Every delimiter after the first is preceded by the CRLF that ends the part before it.
  const next = Buffer.from(`\r\n--${boundary}`);
  let at = body.indexOf(delimiter);
  if (at === -1) return fields;
  at += delimiter.length;
  for (;;) {
    // `--` after a delimiter closes the body.
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return fields;
    const start = body.indexOf('\r\n', at);
    if (start === -1) return fields;
    const end = body.indexOf(next, start);
    if (end === -1) return fields;
    const part = body.subarray(start + 2, end);
    const split = part.indexOf('\r\n\r\n');
    const head = (split === -1 ? part : part.subarray(0, split)).toString('latin1');
    const name = dispositionName(head);
    if (name !== undefined && split !== -1) fields.set(name, part.subarray(split + 4).toString('utf8'));
    at = end + next.length;
  }
}

/**
 * The `name` of a part whose headers say `Content-Disposition: form-data; name="…"`, unless the
 * part is a file (`filename`). Browsers write the name in UTF-8 with `"` as `%22`; the bytes were
 * read as latin1 to find the headers, so they are read back as UTF-8 here.
 */
function dispositionName(head: string): string | undefined {
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
    const value = line.slice(colon + 1);
    if (/;\s*filename\*?\s*=/i.test(value)) return undefined;
    const match = /;\s*name\s*=\s*(?:"([^"]*)"|([^\s;]+))/i.exec(value);
    if (match === null) return undefined;
    return Buffer.from(match[1] ?? match[2]!, 'latin1')
      .toString('utf8')
      .replaceAll('%22', '"');
  }
  return undefined;
}
