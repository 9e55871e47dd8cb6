import type { RoutingView } from '../../src/links/routing-input.ts';

/** The routing fields of a record whose link has none (docs/api.md, the record): present on every record. */
export const NO_ROUTING: Readonly<RoutingView> = {
  rules: [],
  forward_query: false,
  valid_since: null,
  valid_until: null,
  fallback_url: null,
  password_protected: false,
};
