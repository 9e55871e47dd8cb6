/**
 * Shlink's domains (docs/compat.md): `GET /rest/v3/domains` lists this service's domains with
 * their redirects, `PATCH /rest/v3/domains/redirects` sets one's. Shlink's three redirects map onto
 * the service's (docs/api.md, domains): `baseUrlRedirect` is `base_url`; `invalidShortUrlRedirect`
 * (Shlink's: an unknown, expired or used-up short URL) is `not_found` and `expired` at once, read
 * back as `not_found`; `regular404Redirect` (any other path) has no counterpart: it is always null,
 * and setting it is refused.
 */
import type { Ctx } from '../../http/context.ts';
import type { DomainView, RedirectsEdit } from '../../links/domain-redirects.ts';
import type { Service } from '../../links/service.ts';
import { failed, ok, readObject, type Answer } from './answers.ts';
import { isProblem } from './params.ts';
import { invalidData } from './problems.ts';

const redirectsJson = (d: DomainView) => ({ baseUrlRedirect: d.redirects.base_url, regular404Redirect: null, invalidShortUrlRedirect: d.redirects.not_found });

export async function listDomains(service: Service): Promise<Answer> {
  const listed = await service.listDomains();
  if (!listed.ok) return failed(listed, '');
  const [first] = listed.domains;
  return ok({
    domains: {
      data: listed.domains.map((d) => ({ domain: d.domain, isDefault: d.is_default, redirects: redirectsJson(d) })),
      defaultRedirects: redirectsJson(first!),
    },
  });
}

export async function setDomainRedirects(service: Service, ctx: Ctx, maxBodyBytes: number): Promise<Answer> {
  const body = await readObject(ctx.req, maxBodyBytes);
  if (isProblem(body)) return body;
  const domain = body['domain'];
  if (typeof domain !== 'string' || domain === '') return invalidData(['domain'], 'domain must be one of the hosts of GET /rest/v3/domains');
  const regular = body['regular404Redirect'];
  if (regular !== undefined && regular !== null && regular !== '')
    return invalidData(['regular404Redirect'], 'regular404Redirect is not supported: a path that is no short URL is a 404');
  const edit: RedirectsEdit = {};
  if (body['baseUrlRedirect'] !== undefined) edit.baseUrl = body['baseUrlRedirect'];
  if (body['invalidShortUrlRedirect'] !== undefined) edit.notFound = edit.expired = body['invalidShortUrlRedirect'];
  const changed = await service.setRedirects(domain, edit);
  if (!changed.ok) return changed.error === 'not_found' ? invalidData(['domain'], `${domain} is not a domain of this service`) : failed(changed, '');
  return ok(redirectsJson(changed.domain));
}
