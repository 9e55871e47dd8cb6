/**
 * `GET /api/urls/<code>/qr`: the QR code of a live link's short URL, as SVG (docs/api.md). The
 * encoder is the project's own (`src/qr/`): no dependency, and nothing leaves the server.
 */
import { failureError } from './outcomes.ts';
import { DOMAIN } from './routes-openapi.ts';
import { domainParam, type ApiRoute, type RouteDeps } from './route-types.ts';
import { HttpError } from '../errors.ts';
import { body, json, ref } from '../published/openapi-parts.ts';
import { MAX_QR_BYTES } from '../qr/encode.ts';
import { qrSvg } from '../qr/svg.ts';

export const SVG_TYPE = 'image/svg+xml';

export function qrRoute({ service, reply }: Pick<RouteDeps, 'service' | 'reply'>): ApiRoute {
  return {
    path: '/api/urls/:code/qr',
    methods: {
      GET: async (ctx) => {
        const outcome = await service.get(ctx.params['code']!, domainParam(ctx));
        if (!outcome.ok) throw failureError(outcome);
        const shortUrl = outcome.record.short_url;
        // Only a long base path makes a short URL this long; the link itself is fine, so this is
        // not a 500 but a plain answer the operator can act on.
        const bytes = Buffer.byteLength(shortUrl);
        if (bytes > MAX_QR_BYTES) {
          throw new HttpError(422, `the short URL is ${bytes} bytes long; a QR code holds at most ${MAX_QR_BYTES} (version 40, level L)`);
        }
        // The symbol depends on the short URL alone, which never changes for a code; the link may
        // be deleted or expire, though, so a cache must ask again.
        reply.send(ctx.res, 200, SVG_TYPE, qrSvg(shortUrl), ['Cache-Control', 'no-cache']);
      },
    },
    doc: {
      GET: {
        operationId: 'getUrlQr',
        summary: 'The QR code of a link',
        description:
          "An SVG QR code (ISO/IEC 18004, byte mode, error correction level M, or L when the short URL does not fit at M; 4-module quiet zone, black on white, viewBox set so it scales) that reads as exactly the record's short_url.",
        tag: 'links',
        access: 'gate',
        parameters: [DOMAIN],
        responses: {
          200: body('The QR code.', SVG_TYPE, { type: 'string', description: 'An SVG document.' }, ['Cache-Control']),
          400: ref('responses', 'BadRequest'),
          404: ref('responses', 'NotFound'),
          422: json(`The short URL is longer than any QR code holds (${MAX_QR_BYTES} bytes, version 40 at level L): a long base path.`, 'Error'),
        },
      },
    },
  };
}
