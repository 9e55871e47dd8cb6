/**
 * The subset of JSON Schema this service writes (types, properties, required, ranges, lengths,
 * maxItems, const), as a type and as a small validator. The type is the guard: a schema literal using a
 * keyword outside the subset does not compile, so the validator never meets a keyword it would
 * silently ignore. The keywords mean the same in draft-07 and 2020-12, so the schemas serve both
 * OpenAPI 3.1 and MCP tools, and ajv agrees with this validator (test/published/json-schema.test.ts).
 */

export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

export interface JsonSchema {
  type?: JsonType | readonly JsonType[];
  title?: string;
  description?: string;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  enum?: readonly string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  const?: string | number | boolean;
}

function typeOf(value: unknown): JsonType | 'other' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'object') return typeof value as JsonType;
  return 'other';
}

function hasType(expected: JsonType, actual: JsonType | 'other'): boolean {
  return expected === actual || (expected === 'number' && actual === 'integer');
}

/**
 * Every way `value` breaks `schema`, as messages naming the offending place: `root` for the value
 * itself, bare names below it (`retention_days`, `urls[2].short_code`). Empty when it conforms.
 */
export function validateValue(schema: JsonSchema, value: unknown, root = 'value'): string[] {
  const errors: string[] = [];
  check(schema, value, '', root, errors);
  return errors;
}

function check(schema: JsonSchema, value: unknown, path: string, root: string, errors: string[]): void {
  const at = path || root;
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const types: readonly JsonType[] = typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (!types.some((t) => hasType(t, actual))) {
      errors.push(
        `${at} must be ${types.map((t) => (t === 'integer' ? 'an integer' : t === 'object' || t === 'array' ? `an ${t}` : t === 'null' ? 'null' : `a ${t}`)).join(' or ')}`,
      );
      return;
    }
  }
  if (schema.const !== undefined && value !== schema.const) errors.push(`${at} must be ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.includes(value as string)) errors.push(`${at} must be one of ${schema.enum.join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${at} must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${at} must be at most ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    // JSON Schema counts characters (code points), not UTF-16 units.
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      errors.push(`${at} must have at least ${schema.minLength} character${schema.minLength === 1 ? '' : 's'}`);
    if (schema.maxLength !== undefined && length > schema.maxLength) errors.push(`${at} must have at most ${schema.maxLength} characters`);
  }
  if (Array.isArray(value) && schema.minItems !== undefined && value.length < schema.minItems) errors.push(`${at} must have at least ${schema.minItems} items`);
  if (Array.isArray(value) && schema.maxItems !== undefined && value.length > schema.maxItems) errors.push(`${at} must have at most ${schema.maxItems} items`);
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    value.forEach((item, i) => {
      check(items, item, `${at}[${i}]`, root, errors);
    });
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    const props = schema.properties ?? {};
    for (const name of schema.required ?? []) {
      if (!Object.hasOwn(obj, name)) errors.push(`${child(path, name)} is required`);
    }
    for (const [name, v] of Object.entries(obj)) {
      const sub = Object.hasOwn(props, name) ? props[name] : undefined;
      if (sub) check(sub, v, child(path, name), root, errors);
      else if (schema.additionalProperties === false) errors.push(`${child(path, name)} is not allowed`);
    }
  }
}

function child(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}
