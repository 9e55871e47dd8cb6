/**
 * Shlink's official JS SDK (`@shlinkio/shlink-js-sdk`), the oracle of the Shlink surface, typed
 * for these tests. The package's declarations name their modules without extensions, which this
 * project's NodeNext resolution cannot follow, so its types are read from the two declaration
 * files that import nothing, and the client's methods are listed here over them. What runs is the
 * SDK itself.
 */
import * as contract from '@shlinkio/shlink-js-sdk/api-contract';
import * as api from '@shlinkio/shlink-js-sdk';
import * as node from '@shlinkio/shlink-js-sdk/node';
import type * as Errors from '../../node_modules/@shlinkio/shlink-js-sdk/dist/api-contract/errors.d.ts';
import type {
  ShlinkCreateShortUrlData,
  ShlinkDeleteVisitsResult,
  ShlinkDomainRedirects,
  ShlinkDomainsList,
  ShlinkEditDomainRedirects,
  ShlinkEditShortUrlData,
  ShlinkHealth,
  ShlinkMercureInfo,
  ShlinkRedirectRulesList,
  ShlinkShortUrl,
  ShlinkShortUrlIdentifier,
  ShlinkShortUrlsList,
  ShlinkShortUrlsListParams,
  ShlinkTagsList,
  ShlinkTagsStatsList,
  ShlinkVisitsList,
  ShlinkVisitsOverview,
  ShlinkVisitsParams,
} from '../../node_modules/@shlinkio/shlink-js-sdk/dist/api-contract/types.d.ts';

export type * from '../../node_modules/@shlinkio/shlink-js-sdk/dist/api-contract/types.d.ts';
export type { ProblemDetailsError } from '../../node_modules/@shlinkio/shlink-js-sdk/dist/api-contract/errors.d.ts';

/** The SDK's error types, as it exports them. */
export const ErrorType = (contract as unknown as typeof Errors).ErrorType;

/** The methods of the SDK's `ShlinkApiClient` these tests call (its `api-contract/ShlinkApiClient.d.ts`). */
export interface ShlinkClient {
  health(): Promise<ShlinkHealth>;
  listShortUrls(params?: ShlinkShortUrlsListParams): Promise<ShlinkShortUrlsList>;
  createShortUrl(data: ShlinkCreateShortUrlData): Promise<ShlinkShortUrl>;
  getShortUrl(id: ShlinkShortUrlIdentifier): Promise<ShlinkShortUrl>;
  updateShortUrl(id: ShlinkShortUrlIdentifier, data: ShlinkEditShortUrlData): Promise<ShlinkShortUrl>;
  deleteShortUrl(id: ShlinkShortUrlIdentifier): Promise<void>;
  getShortUrlRedirectRules(id: ShlinkShortUrlIdentifier): Promise<ShlinkRedirectRulesList>;
  getShortUrlVisits(id: ShlinkShortUrlIdentifier, params?: ShlinkVisitsParams): Promise<ShlinkVisitsList>;
  deleteShortUrlVisits(id: ShlinkShortUrlIdentifier): Promise<ShlinkDeleteVisitsResult>;
  getVisitsOverview(): Promise<ShlinkVisitsOverview>;
  getOrphanVisits(params?: ShlinkVisitsParams): Promise<ShlinkVisitsList>;
  listTags(): Promise<ShlinkTagsList>;
  tagsStats(): Promise<ShlinkTagsStatsList>;
  listDomains(): Promise<ShlinkDomainsList>;
  editDomainRedirects(redirects: ShlinkEditDomainRedirects): Promise<ShlinkDomainRedirects>;
  mercureInfo(): Promise<ShlinkMercureInfo>;
}

type ClientClass = new (http: unknown, server: { baseUrl: string; apiKey: string }) => ShlinkClient;

/** The SDK's client over its Node.js HTTP client, pointed at `baseUrl` (the server's URL) with `apiKey`. */
export function shlinkClient(baseUrl: string, apiKey: string): ShlinkClient {
  const Client = (api as unknown as { ShlinkApiClient: ClientClass }).ShlinkApiClient;
  const Http = (node as unknown as { NodeHttpClient: new () => unknown }).NodeHttpClient;
  return new Client(new Http(), { baseUrl, apiKey });
}

/** The problem details an SDK call rejected with (the SDK rejects with the parsed body). */
export async function problemOf(call: Promise<unknown>): Promise<Errors.ProblemDetailsError> {
  try {
    await call;
  } catch (err) {
    return err as Errors.ProblemDetailsError;
  }
  throw new Error('expected the call to fail with a problem');
}
