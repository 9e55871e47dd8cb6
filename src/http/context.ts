/**
 * What a route handler gets for one request, and the handler's type. The dispatch (`dispatch.ts`)
 * builds the context once the router matched; handlers (`api/routes.ts`, `route-table.ts`) only read it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  params: Record<string, string>;
  /** The parsed query string (parsed on first use). */
  query(): URLSearchParams;
}

/** A route's handler for one method; a promise when it answers later (a body to read, a write). */
export type RouteHandler = (ctx: Ctx) => void | Promise<void>;
