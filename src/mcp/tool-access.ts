/**
 * Who calls a tool, and whether the key's role allows it (docs/mcp.md, keys and roles): the key
 * is the `X-API-Key` header of the HTTP request, as on the REST door, else the tool's `api_key`
 * argument (for clients that cannot set a header). The service decides (`src/links/keys.ts`); this
 * door only says its verdict as a tool result the model can read.
 */
import type { Action, Principal } from '../links/access.ts';
import type { Service, VisitRequest } from '../links/service.ts';
import { failed, unknownCode, type Tool, type ToolResult } from './tool-results.ts';

/**
 * The answer to a key that is missing where one is needed, wrong, revoked or expired: one
 * sentence for all of them, so a guess learns nothing about which.
 */
export const BAD_KEY =
  'api_key is not a key of this service: send a key of its API_KEYS setting or a stored key that has not expired or been revoked, in the X-API-Key header or as api_key.';

export const badKey = (): ToolResult => failed(BAD_KEY);

/** The key a call presents: the header wins, as it does over `?api_key=` on the REST door. */
export function presentedKey(args: Readonly<Record<string, unknown>>, from: VisitRequest | undefined): string | undefined {
  const header = from?.headers['x-api-key'];
  if (typeof header === 'string') return header;
  const arg = args['api_key'];
  return typeof arg === 'string' ? arg : undefined;
}

/**
 * The principal of a call to a tool that does `action` (`undefined` for a create without a key
 * where `create_access` is `open`), or the result that refuses it: the bad-key sentence, the
 * service's sentence for a role too low, or the store's outage.
 */
async function callerOf(
  service: Service,
  action: Action,
  args: Readonly<Record<string, unknown>>,
  from: VisitRequest | undefined,
): Promise<{ principal: Principal | undefined } | ToolResult> {
  const key = presentedKey(args, from);
  const who = action === 'create' ? await service.keys.mayCreate(key) : await service.keys.authorize(key, action);
  if (who === undefined || !('ok' in who)) return { principal: who };
  if (who.error === 'unavailable') return failed(who.detail);
  return who.detail === undefined ? badKey() : failed(who.detail);
}

/**
 * Runs `tool` once the call's key may do what the tool does: the key before the work, so a wrong
 * key or a role too low learns nothing of the links. A tool that reads or edits the link of its
 * `code` asks the service too whether the key reaches that link (an `editor` reaches only the
 * links it made): another author's link is unknown, as if it did not exist.
 */
export async function runChecked(tool: Tool, args: Readonly<Record<string, unknown>>, service: Service, from: VisitRequest | undefined): Promise<ToolResult> {
  if (tool.access === undefined) return tool.run(args, service, { from });
  const caller = await callerOf(service, tool.access, args, from);
  if (!('principal' in caller)) return caller;
  const { principal } = caller;
  const code = args['code'];
  if ((tool.access === 'read' || tool.access === 'edit') && principal !== undefined && typeof code === 'string') {
    const may = await service.mayTouch(principal, code, args['domain']);
    if (may !== true) return may.error === 'unavailable' ? failed(may.detail) : unknownCode(code);
  }
  return tool.run(args, service, { from, principal });
}
