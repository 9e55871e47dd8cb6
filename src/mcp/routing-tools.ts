/**
 * Where a link sends each visitor, on the MCP door (docs/mcp.md): the routing arguments of
 * `shorten_url` and `update_url`, and the `set_rules` tool, each calling the same service
 * operation as the REST route. As in `tools.ts`, the schemas say what JSON each argument is; the
 * service checks every value and a refusal is an `isError` result with its reason.
 */
import type { RoutingInput } from '../links/routing-input.ts';
import { CONDITION_NAMES, MAX_RULES } from '../links/redirect-rules.ts';
import { RECORD_SCHEMA } from '../published/schemas.ts';
import { asRecord, failed, missing, structured, type Tool } from './tool-results.ts';

const RULES_ARG = {
  type: ['array', 'null'],
  items: { type: 'object' },
  description:
    `Redirect rules in order, at most ${MAX_RULES}: each {url, conditions: [{type, key, value}]}; the first whose conditions all hold for a visitor gives the target. ` +
    `Condition types: ${CONDITION_NAMES.join(', ')}; key is the query parameter for the two query types, null otherwise. [] or null removes them.`,
} as const;

/** The routing arguments, by the record's names. */
export const ROUTING_ARGS = {
  rules: RULES_ARG,
  forward_query: { type: ['boolean', 'null'], description: "Append the short URL's query string to the target's." },
  valid_since: { type: ['integer', 'null'], description: 'Unix seconds before which the link answers as unknown; null removes it.' },
  valid_until: { type: ['integer', 'null'], description: 'Unix seconds from which the link answers as expired; null removes it.' },
  fallback_url: { type: ['string', 'null'], description: 'Where an expired or used-up link sends a visitor instead of its page; null removes it.' },
  password: { type: ['string', 'null'], description: 'A password (8–128 characters) that opening the link asks for; never shown again; null removes it.' },
} as const;

/** The routing arguments given, as the service takes them; undefined for none. */
export function routingArgs(args: Readonly<Record<string, unknown>>): RoutingInput | undefined {
  const input: RoutingInput = {
    rules: args['rules'],
    forwardQuery: args['forward_query'],
    validSince: args['valid_since'],
    validUntil: args['valid_until'],
    fallbackUrl: args['fallback_url'],
    password: args['password'],
  };
  return Object.values(input).some((value) => value !== undefined) ? input : undefined;
}

export const SET_RULES: Tool = {
  name: 'set_rules',
  title: "Set a short link's redirect rules",
  description:
    'Replace the redirect rules of a live short link: where it sends each visitor by device, browser, language, country, query parameter, address or date. ' +
    'The first rule whose conditions all hold gives the target; a visitor no rule fits goes to the original URL; [] removes every rule. ' +
    'Needs a key whose role may edit (admin, or an editor on the links it made). Returns the updated link.',
  inputSchema: {
    type: 'object',
    properties: {
      code: { type: 'string', description: 'The short code: the last path segment of a short URL.' },
      domain: { type: 'string', description: "The link's domain: one of the service's hosts, or absent for the default one." },
      api_key: { type: 'string', description: 'An API key whose role may edit, when the X-API-Key header carries none.' },
      rules: { ...RULES_ARG, type: 'array' },
    },
    required: ['code', 'rules'],
    additionalProperties: false,
  },
  outputSchema: RECORD_SCHEMA,
  // Destructive: the old rules are replaced. Idempotent: the same rules again leave the same link.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  access: 'edit',
  async run(args, service) {
    const code = args['code'] as string;
    const outcome = await service.update(code, { routing: { rules: args['rules'] } }, args['domain']);
    if (outcome.ok) return structured(asRecord(outcome.record));
    return outcome.error === 'not_found' ? missing(service, code, args['domain']) : failed(outcome.detail);
  },
};
