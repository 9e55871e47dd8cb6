/**
 * What an MCP tool is (`tools.ts` holds the table) and the results its `run` answers: the
 * structured result with its JSON as text, or a failure of the work told to the model as an
 * `isError` result (docs/mcp.md) — the service's reason, or a sentence of this door's own.
 */
import type { Action, Principal } from '../links/access.ts';
import type { Service, VisitRequest } from '../links/service.ts';
import type { UrlRecord } from '../links/record.ts';
import type { JsonSchema } from '../published/json-schema.ts';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** None of the tools reaches beyond this service: a URL is stored, never fetched. */
  openWorldHint: false;
}

// A type, not an interface: it must pass as the plain JSON object a JSON-RPC result is.
export type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: true;
};

type ObjectSchema = JsonSchema & { type: 'object' };

/** What a tool's `run` is given besides its arguments. */
export interface ToolCall {
  /** The HTTP request of the call, when there is one (the create limit counts its client). */
  from?: VisitRequest | undefined;
  /** Who called, once the key's role allowed the tool (`tool-access.ts`); undefined: no key (an open create, a public read). */
  principal?: Principal | undefined;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectSchema;
  outputSchema: ObjectSchema;
  annotations: ToolAnnotations;
  /**
   * What the tool does, as the roles table names it (`src/links/access.ts`), asked before `run`
   * (`tool-access.ts`): `create` as `create_access` says. Absent: no key (what the REST door
   * answers without one). Never declared to clients.
   */
  access?: Action;
  run(args: Readonly<Record<string, unknown>>, service: Service, call: ToolCall): ToolResult | Promise<ToolResult>;
}

const text = (t: string): { type: 'text'; text: string } => ({ type: 'text', text: t });

/** The structured result, and the same JSON as text for clients that only read `content`. */
export function structured(value: Record<string, unknown>, ...lead: string[]): ToolResult {
  return { content: [...lead.map(text), text(JSON.stringify(value))], structuredContent: value };
}

export const asRecord = (r: UrlRecord): Record<string, unknown> => ({ ...r });

/**
 * Unknown and expired read the same through the REST API (404); the model is told which. A HEAD's
 * decision: it counts nothing.
 */
export async function missing(service: Service, code: string, domain?: unknown): Promise<ToolResult> {
  // Called for a `not_found` outcome, whose domain was a good one.
  const on = service.domains.named(domain);
  return typeof on === 'object' && on !== null
    ? unknownCode(code)
    : (await service.visit(code, false, undefined, false, on)).kind === 'expired'
      ? failed(`The short link ${JSON.stringify(code)} has expired.`)
      : unknownCode(code);
}

/** No link of `code` that the caller may see. */
export const unknownCode = (code: string): ToolResult => failed(`No short link has the code ${JSON.stringify(code)}.`);

/** A failure of the work, told to the model (docs/mcp.md): the REST `detail`, or a sentence of its own. */
export function failed(message: string): ToolResult {
  return { content: [text(message)], isError: true };
}
