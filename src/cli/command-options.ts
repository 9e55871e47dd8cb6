/**
 * The arguments of a management command after its action (and id), as `keys` and `webhooks`
 * read them: the command's own options (`--name N` or `--name=N`) into its fields, anything else
 * a setting for `resolveConfig` (`--data-dir D`), its value with it; and the settings resolved.
 */
import type { Config } from '../config/config.ts';
import { resolveConfig } from '../config/resolve.ts';
import { ConfigError } from '../errors.ts';
import type { CommandIo } from './transfer-commands.ts';

/** Reads `rest`: an option of `options` sets its field of `into`; the rest goes to `settings`. */
export function readCommandOptions<F extends string>(
  rest: readonly string[],
  options: Readonly<Record<string, F>>,
  into: Partial<Record<F, string>>,
  settings: string[],
): void {
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg;
    // An own key only: an argument `constructor` is no option.
    const field = Object.hasOwn(options, name) ? options[name] : undefined;
    if (field !== undefined) {
      // The next argument whatever it is (a name may start with `-`): the service, not the
      // parser, says what a value may be.
      const value = eq !== -1 ? arg.slice(eq + 1) : rest[++i];
      if (value === undefined) throw new ConfigError(`option ${name} needs a value`);
      into[field] = value;
    } else {
      settings.push(arg);
      // A setting's value travels with it (`--data-dir D`); resolveConfig reads the pair.
      if (arg.startsWith('--') && eq === -1 && rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('--')) settings.push(rest[++i]!);
    }
  }
}

/**
 * The server's settings from a command's `settings` (and the environment), or 2, the exit code of
 * bad usage, with the reason written to stderr after `label`. `command` names it in the refusal of
 * a switch (`--help`) it does not take.
 */
export function commandConfig(command: string, settings: readonly string[], io: CommandIo, label: string): Config | 2 {
  try {
    const resolved = resolveConfig({ argv: [...settings], env: io.env, readFile: io.readFile });
    if (resolved.command !== 'run') throw new ConfigError(`${command} takes no ${[...resolved.switches].join(' ')}`);
    return resolved.config;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr.write(`${label}: ${err.message}\n`);
    return 2;
  }
}
