/**
 * Configuration (docs/operations.md): resolution of the settings table (`settings.ts`) from flags, environment
 * and a JSON file (the server's), or from the library's options. Precedence: flag > env > file > default. A bad value is a `ConfigError` whose
 * message names the setting as the user spelled it.
 *
 * The same parsers (`parsers.ts`) validate the options of `createShortener()`, so the library and
 * the server accept exactly the same values.
 */
import { ConfigError } from '../errors.ts';
import { BadValue } from './parsers.ts';
import type { AnySetting, Config } from './config.ts';
import { defaults, envName, TABLE } from './settings.ts';
import { closestName } from './suggest.ts';

/** How the user spelled each setting that was given (env name, `--flag`, file key), for messages. */
type Spelling = Map<keyof Config, string>;

function apply(config: Config, s: AnySetting, raw: unknown, name: string, spelling?: Spelling): void {
  spelling?.set(s.prop, name);
  try {
    (config as Record<keyof Config, unknown>)[s.prop] = s.parse(raw);
  } catch (err) {
    if (!(err instanceof BadValue)) throw err;
    // Secrets are named, never echoed.
    const shown = s.secret ? '' : ` ${JSON.stringify(typeof raw === 'string' ? raw : JSON.stringify(raw))}`;
    throw new ConfigError(`invalid ${name}${shown}: ${err.message}`);
  }
}

/** Cross-setting rules, checked once every source has been applied. */
function check(config: Config, spelling: Spelling): Config {
  for (const s of TABLE) {
    const value = config[s.prop];
    if (s.relation === undefined || typeof value !== 'number') continue;
    const { must, other } = s.relation;
    const limit = config[other];
    if (must === 'at least' ? value >= limit : value <= limit) continue;
    const name = spelling.get(s.prop) ?? s.env;
    throw new ConfigError(`invalid ${name} ${value}: must be ${must} ${spelling.get(other) ?? envName(other)} (${limit})`);
  }
  return config;
}

export type Command = 'run' | 'help' | 'version' | 'repair' | 'compact';

export interface Sources {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Reads the `--config` file; injectable for tests. */
  readFile: (path: string) => string;
}

export interface Resolved {
  command: Command;
  config: Config;
  /** Storage maintenance flags (`--repair`, `--compact`) and others that are not settings. */
  switches: ReadonlySet<string>;
}

/** Flags that are not settings. */
const SWITCHES = new Set(['--help', '-h', '--version', '-v', '--repair', '--compact']);

/**
 * Resolves the configuration from flags, environment and an optional JSON file.
 * Pure but for `readFile`; throws `ConfigError` with a one-line message.
 */
export function resolveConfig({ argv, env, readFile }: Sources): Resolved {
  const byFlag = new Map(TABLE.map((s) => [s.flag, s]));
  const flags: [AnySetting, string, string][] = [];
  const switches = new Set<string>();
  let configFile: string | undefined;

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq !== -1 ? arg.slice(eq + 1) : undefined;
    if (SWITCHES.has(name) && inline === undefined) {
      switches.add(name === '-h' ? '--help' : name === '-v' ? '--version' : name);
      continue;
    }
    const s = byFlag.get(name);
    if (name !== '--config' && !s) {
      // A stray word may be a secret that lost its flag (`--api-token= s3cret`): never echo it.
      throw new ConfigError(name.startsWith('-') ? `unknown option ${name} (see --help)` : 'unexpected argument: options start with -- (see --help)');
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (s?.boolean && (next === undefined || next.startsWith('--'))) value = 'true';
      else if (next === undefined) throw new ConfigError(`option ${name} needs a value`);
      else value = argv[++i]!;
    }
    if (s) flags.push([s, value, name]);
    else configFile = value;
  }

  if (switches.has('--help')) return { command: 'help', config: defaults(), switches };
  if (switches.has('--version')) return { command: 'version', config: defaults(), switches };

  const config = defaults();
  const spelling: Spelling = new Map();
  if (configFile !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFile(configFile));
    } catch (err) {
      const why = err instanceof SyntaxError ? 'not valid JSON' : ((err as NodeJS.ErrnoException).code ?? 'unreadable');
      throw new ConfigError(`invalid --config ${JSON.stringify(configFile)}: ${why}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`invalid --config ${JSON.stringify(configFile)}: must hold a JSON object`);
    }
    const byFile = new Map(TABLE.filter((s) => s.file).map((s) => [s.file!, s]));
    // A secret has no file key (a settings file gets copied, committed, backed up), but the name
    // its key would have is no typo: say where the value goes instead of "unknown key".
    const fileless = new Map(TABLE.filter((s) => !s.file).map((s) => [s.env.toLowerCase(), s]));
    for (const [key, raw] of Object.entries(parsed)) {
      const s = byFile.get(key);
      if (!s) {
        const secret = fileless.get(key);
        const why = secret ? `"${key}" is never read from a file: set the ${secret.env} environment variable` : `unknown key "${key}"`;
        throw new ConfigError(`invalid --config ${JSON.stringify(configFile)}: ${why}`);
      }
      apply(config, s, raw, `${key} (in ${configFile})`, spelling);
    }
  }
  for (const s of TABLE) {
    const raw = env[s.env];
    if (raw !== undefined) apply(config, s, raw, s.env, spelling);
  }
  for (const [s, raw, name] of flags) apply(config, s, raw, name, spelling);
  const command = switches.has('--repair') ? 'repair' : switches.has('--compact') ? 'compact' : 'run';
  return { command, config: check(config, spelling), switches };
}

/**
 * Library options: any subset of the settings, validated by the same parsers. A name that is not a
 * setting is a `TypeError` naming it (and the name it was probably meant to be), as an unknown flag
 * or file key stops the CLI (docs/operations.md): `{ apiKey: 'k' }` must not run a service without its key.
 * `others`: the caller's own option names, offered as suggestions too (they never arrive here).
 */
export function configFromOptions(options: Readonly<Record<string, unknown>>, others: readonly string[] = []): Config {
  const props: readonly string[] = TABLE.map((s) => s.prop);
  for (const name of Object.keys(options)) {
    if (props.includes(name)) continue;
    const guess = closestName(name, [...props, ...others]);
    throw new TypeError(`unknown option "${name}"${guess === undefined ? '' : `: did you mean "${guess}"?`}`);
  }
  const config = defaults();
  const spelling: Spelling = new Map();
  for (const s of TABLE) {
    const raw = options[s.prop];
    if (raw !== undefined) apply(config, s, raw, s.prop, spelling);
  }
  return check(config, spelling);
}
