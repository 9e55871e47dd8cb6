/**
 * One rule for a tool some tests need and this machine lacks (Chromium, promtool, zbarimg,
 * PostgreSQL, PID namespaces): on a developer machine those tests skip with a loud message, and
 * are listed under "Not run" at the end of the run; under CI they fail, since CI installs every
 * tool and a skip there would be a silent pass.
 *
 * CI is `CI=true`, what `.ci/run` exports (and what the common CI services set), read here and
 * nowhere else: two readings of it once let one helper fail where another skipped.
 */

/** True under CI: a missing tool fails the tests that need it. */
export const UNDER_CI = process.env['CI'] === 'true';

/**
 * `message` (why `what` cannot run) as an error under CI; elsewhere printed in a banner on stderr
 * and returned, for the caller to skip with.
 */
export function missingTool(what: string, message: string): string {
  if (UNDER_CI) throw new Error(message);
  process.stderr.write(`\n${'!'.repeat(100)}\n!!! SKIPPING ${what}: ${message}\n${'!'.repeat(100)}\n\n`);
  return message;
}
