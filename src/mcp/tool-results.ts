/**
 * What an MCP tool is (`tools.ts` holds the table) and the results its `run` answers: the
 * structured result with its JSON as text, or a failure of the work told to the model as an
 * `isError` result (docs/mcp.md) — the service's reason, or a sentence of this door's own.
 */
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

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectSchema;
  outputSchema: ObjectSchema;
  annotations: ToolAnnotations;
  /** `from`: the HTTP request of the call, when there is one (the create limit counts its client). */
  run(args: Readonly<Record<string, unknown>>, service: Service, from?: VisitRequest): ToolResult | Promise<ToolResult>;
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
export async function missing(service: Service, code: string): Promise<ToolResult> {
  return (await service.visit(code, false)).kind === 'expired'
    ? failed(`The short link ${JSON.stringify(code)} has expired.`)
    : failed(`No short link has the code ${JSON.stringify(code)}.`);
}

/** A failure of the work, told to the model (docs/mcp.md): the REST `detail`, or a sentence of its own. */
export function failed(message: string): ToolResult {
  return { content: [text(message)], isError: true };
}

export function isAdmin(service: Service, key: unknown): boolean {
  return service.isAdminKey(typeof key === 'string' ? key : undefined);
}

export const notAdmin = (): ToolResult => failed('api_key is not one of the admin keys of this service (its API_KEYS setting).');
