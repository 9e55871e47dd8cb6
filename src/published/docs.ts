/**
 * `/docs`: the OpenAPI document rendered as one HTML page on the server — a pure function of the
 * document. No script at all and no inline style (the Content-Security-Policy forbids both); the
 * look comes from one same-origin stylesheet, `static/docs.css`. Every text is HTML-escaped.
 */
import type { OpenApiDocument, OpenApiObject, Operation } from './openapi.ts';
import { escapeHtml } from '../http/respond.ts';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Escapes, then renders `code` spans and blank-line paragraphs: all the markup descriptions use. */
function prose(text: string | undefined): string {
  if (!text) return '';
  return text
    .split(/\n\s*\n/)
    .map((para) => `<p>${escapeHtml(para).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`)
    .join('\n');
}

const inline = (text: string): string => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const field = (o: OpenApiObject | undefined, key: string): unknown => (o ? o[key] : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): OpenApiObject | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as OpenApiObject) : undefined);

/** The limits a one-line type names, in this order. */
const LIMITS = [
  ['minimum', '≥'],
  ['maximum', '≤'],
  ['minLength', 'length ≥'],
  ['maxLength', 'length ≤'],
  ['pattern', 'matching'],
] as const;

interface Entry {
  path: string;
  method: string;
  op: Operation;
}

/** Follows a local `$ref` into the components. */
function resolve(doc: OpenApiDocument, o: OpenApiObject | undefined): OpenApiObject | undefined {
  const target = str(field(o, '$ref'));
  if (!target) return o;
  const [, , kind, name] = target.split('/');
  const group = doc.components[kind as keyof OpenApiDocument['components']];
  return group?.[name ?? ''];
}

/** A one-line type: a link for a component, otherwise its type and limits. */
function typeOf(schema: OpenApiObject | undefined): string {
  if (!schema) return '';
  const target = str(field(schema, '$ref'));
  if (target) {
    const name = target.split('/').pop()!;
    return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`;
  }
  const oneOf = field(schema, 'oneOf');
  if (Array.isArray(oneOf)) return oneOf.map((s) => typeOf(obj(s))).join(' or ');
  if (field(schema, 'const') !== undefined) return `<code>${escapeHtml(JSON.stringify(field(schema, 'const')))}</code>`;
  const type = field(schema, 'type');
  let text = Array.isArray(type) ? type.join(' or ') : str(type);
  if (text === 'array') text = `array of ${typeOf(obj(field(schema, 'items')))}`;
  else text = escapeHtml(text);
  const limits: string[] = [];
  const enumeration = field(schema, 'enum');
  if (Array.isArray(enumeration)) limits.push(`one of ${enumeration.map((v) => JSON.stringify(v)).join(', ')}`);
  for (const [key, label] of LIMITS) {
    const v = field(schema, key);
    if (v !== undefined) limits.push(`${label} ${String(v)}`);
  }
  return limits.length > 0 ? `${text} (${escapeHtml(limits.join(', '))})` : text;
}

/**
 * A table in a box of its own, which scrolls sideways when the table is wider than the screen (a
 * phone), so the page itself never does.
 */
function table(headings: readonly string[], rows: readonly string[]): string {
  return `<div class="table-wrap">\n<table>\n<tr>${headings.map((h) => `<th>${h}</th>`).join('')}</tr>\n${rows.join('\n')}\n</table>\n</div>`;
}

function access(doc: OpenApiDocument, op: Operation): string {
  if (op.security.length === 0) return 'Public.';
  // A peer's own credential instead of the gate (docs/compat.md): its scheme says what to send.
  const [own] = Object.keys(op.security[0] ?? {}).filter((name) => name !== 'bearerAuth' && !name.startsWith('adminKey'));
  if (own !== undefined) return inline(str(field(doc.components.securitySchemes[own], 'description')));
  if (op.security.length > 1)
    return 'Gate (bearer token, when enabled) and an API key whose role allows it: the <code>X-API-Key</code> header (or the deprecated <code>api_key</code> query parameter).';
  return 'Gate: <code>Authorization: Bearer &lt;API_TOKEN&gt;</code> when the server has a token.';
}

function parameters(doc: OpenApiDocument, op: Operation): string {
  if (!op.parameters?.length) return '';
  const rows = op.parameters.map((p) => {
    const param = resolve(doc, p);
    const flags = [field(param, 'required') ? 'required' : '', field(param, 'deprecated') ? 'deprecated' : ''].filter(Boolean).join(', ');
    return (
      `<tr><td><code>${escapeHtml(str(field(param, 'name')))}</code>${flags ? ` <em>${flags}</em>` : ''}</td>` +
      `<td>${escapeHtml(str(field(param, 'in')))}</td><td>${typeOf(obj(field(param, 'schema')))}</td>` +
      `<td>${inline(str(field(param, 'description')))}</td></tr>`
    );
  });
  return `<h4>Parameters</h4>\n${table(['Name', 'In', 'Type', 'Description'], rows)}`;
}

function contents(o: OpenApiObject | undefined): string {
  const content = obj(field(o, 'content'));
  if (!content) return '';
  return Object.entries(content)
    .map(([type, media]) => `<code>${escapeHtml(type)}</code>${obj(field(obj(media), 'schema')) ? `: ${typeOf(obj(field(obj(media), 'schema')))}` : ''}`)
    .join('<br>');
}

function responses(doc: OpenApiDocument, op: Operation): string {
  const rows = Object.entries(op.responses).map(([status, r]) => {
    const response = resolve(doc, r);
    const headers = Object.keys(obj(field(response, 'headers')) ?? {})
      .map((h) => `<code>${escapeHtml(h)}</code>`)
      .join(', ');
    return `<tr><td>${escapeHtml(status)}</td><td>${inline(str(field(response, 'description')))}</td><td>${contents(response)}</td><td>${headers}</td></tr>`;
  });
  return `<h4>Responses</h4>\n${table(['Status', 'Description', 'Body', 'Headers'], rows)}`;
}

/** The MCP tools an operation is also reached by, and how to point a client at them. */
function tools(serverUrl: string, op: Operation): string {
  const list = op['x-mcp-tools'];
  if (!Array.isArray(list)) return '';
  const rows = list.map((t) => {
    const tool = obj(t);
    const hints = obj(field(tool, 'annotations')) ?? {};
    const flags = Object.entries(hints)
      .filter(([, v]) => v === true)
      .map(([k]) => k.replace(/Hint$/, ''));
    return (
      `<tr><td><code>${escapeHtml(str(field(tool, 'name')))}</code></td><td>${escapeHtml(str(field(tool, 'title')))}</td>` +
      `<td>${inline(str(field(tool, 'description')))}</td><td>${escapeHtml(flags.join(', '))}</td></tr>`
    );
  });
  return (
    `<h4>Tools</h4>\n<p>Point an MCP client (Streamable HTTP transport) at <code>${escapeHtml(serverUrl)}/mcp</code>, ` +
    'with the same <code>Authorization: Bearer</code> header as the API when the gate is on. ' +
    'Each tool declares an input and an output schema; results carry <code>structuredContent</code> and the same JSON as text, ' +
    'and a failure of the work (invalid URL, unknown code, wrong key, expired link) is a result with <code>isError: true</code>.</p>\n' +
    table(['Tool', 'Title', 'Description', 'Hints'], rows)
  );
}

/** Every operation of the document, in the order of its paths and then of `METHODS`. */
function entriesOf(doc: OpenApiDocument): Entry[] {
  const entries: Entry[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op) entries.push({ path, method, op });
    }
  }
  return entries;
}

/** One operation in full: what it does, who may call it, what it takes and what it answers. */
function article(doc: OpenApiDocument, { path, method, op }: Entry): string {
  const request = op.requestBody ? `<h4>Request body</h4>\n<p>${contents(op.requestBody)}</p>` : '';
  return (
    `<article id="op-${escapeHtml(op.operationId)}" class="operation${op.deprecated ? ' deprecated' : ''}">\n` +
    `<h3><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code>${op.deprecated ? ' <em>deprecated</em>' : ''}</h3>\n` +
    `<p class="summary">${inline(op.summary)}</p>\n${prose(op.description)}\n<p class="access">${access(doc, op)}</p>\n` +
    `${parameters(doc, op)}\n${request}\n${responses(doc, op)}\n${tools(doc.servers[0]?.url ?? '', op)}\n</article>`
  );
}

const opLink = ({ path, method, op }: Entry): string =>
  `<a href="#op-${escapeHtml(op.operationId)}"><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code></a>` +
  (op.deprecated ? ' <em>deprecated</em>' : '');

/** Per tag of the document: its section of articles, and its entry in the contents. */
function byTag(doc: OpenApiDocument): { sections: string[]; toc: string[] } {
  const entries = entriesOf(doc);
  const sections: string[] = [];
  const toc: string[] = [];
  for (const tag of doc.tags) {
    const mine = entries.filter((o) => o.op.tags.includes(tag.name));
    const articles = mine.map((o) => article(doc, o));
    sections.push(`<section id="tag-${tag.name}">\n<h2>${escapeHtml(tag.name)}</h2>\n<p>${inline(tag.description)}</p>\n${articles.join('\n')}\n</section>`);
    const items = mine.map((o) => `<li>${opLink(o)}</li>`);
    toc.push(`<li><a href="#tag-${tag.name}">${escapeHtml(tag.name)}</a>\n<ul>\n${items.join('\n')}\n</ul></li>`);
  }
  return { sections, toc };
}

function deprecation(d: OpenApiDocument['x-deprecations'][number]): string {
  return (
    `<article id="deprecation-${escapeHtml(d.usage)}">\n<h3>${inline(d.summary)}</h3>\n${prose(d.details ?? undefined)}\n` +
    `<p>Since ${new Date(d.since * 1000).toISOString().slice(0, 10)}: responses carry <code>Deprecation: @${d.since}</code> and ` +
    `<code>Link: &lt;…/docs#deprecations&gt;; rel="deprecation"</code>.</p>\n</article>`
  );
}

export function renderDocs(doc: OpenApiDocument): string {
  const basePath = new URL(doc.servers[0]?.url ?? 'http://localhost/').pathname.replace(/\/+$/, '');
  const { sections, toc } = byTag(doc);
  const schemes = Object.entries(doc.components.securitySchemes).map(
    ([name, s]) => `<dt><code>${escapeHtml(name)}</code></dt><dd>${inline(str(field(s, 'description')))}</dd>`,
  );
  const schemas = Object.entries(doc.components.schemas).map(
    ([name, s]) => `<h3 id="schema-${escapeHtml(name)}">${escapeHtml(name)}</h3>\n<pre><code>${escapeHtml(JSON.stringify(s, null, 2))}</code></pre>`,
  );
  const title = `${doc.info.title} ${doc.info.version}: API reference`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${escapeHtml(basePath)}/static/docs.css">
<link rel="icon" href="${escapeHtml(basePath)}/static/favicon.svg" type="image/svg+xml">
</head>
<body>
<header>
<h1>${escapeHtml(doc.info.title)} <small>${escapeHtml(doc.info.version)}</small></h1>
<p>${inline(doc.info.summary)}</p>
<p>Server: <code>${escapeHtml(doc.servers[0]?.url ?? '')}</code>. Machine-readable: <a href="${escapeHtml(basePath)}/openapi.json">openapi.json</a> (OpenAPI ${escapeHtml(doc.openapi)}).</p>
</header>
<nav aria-label="Contents">
<h2>Contents</h2>
<ul>
<li><a href="#rules">General rules</a></li>
<li><a href="#authentication">Authentication</a></li>
${toc.join('\n')}
<li><a href="#deprecations">Deprecations</a></li>
<li><a href="#schemas">Schemas</a></li>
</ul>
</nav>
<main>
<section id="rules">
<h2>General rules</h2>
${prose(doc.info.description)}
</section>
<section id="authentication">
<h2>Authentication</h2>
<dl>
${schemes.join('\n')}
</dl>
</section>
${sections.join('\n')}
<section id="deprecations">
<h2>Deprecations</h2>
<p>Deprecated usages keep working. Their notices are also served as data by <code>GET /api/deprecations</code>, in the shape of <a href="${escapeHtml(basePath)}/schemas/v2/DeprecationNoticeNotification.json">DeprecationNoticeNotification</a>.</p>
${doc['x-deprecations'].map(deprecation).join('\n')}
</section>
<section id="schemas">
<h2>Schemas</h2>
${schemas.join('\n')}
</section>
</main>
</body>
</html>
`;
}
