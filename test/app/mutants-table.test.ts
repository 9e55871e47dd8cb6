/**
 * The table of `npm run mutate` (docs/architecture.md, "Mutants") follows the code it mutates:
 * every mutant's text occurs exactly once in its file, and every test file it names exists. A
 * move or an edit that leaves a mutant behind fails here, in `npm test`, and not only on the day
 * someone runs the mutants.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { MUTANTS } from '../../scripts/mutants.ts';
import { ROOT } from '../support/helpers.ts';

test('every mutant names a file that holds its text exactly once, and test files that exist', () => {
  assert.ok(MUTANTS.length >= 14, `${MUTANTS.length} mutants`);
  const problems: string[] = [];
  for (const m of MUTANTS) {
    const path = join(ROOT, m.file);
    if (!existsSync(path)) {
      problems.push(`${m.name}: no file ${m.file}`);
      continue;
    }
    const times = readFileSync(path, 'utf8').split(m.from).length - 1;
    if (times !== 1) problems.push(`${m.name}: ${m.file} holds its text ${times} times`);
    if (m.from === m.to) problems.push(`${m.name}: the mutant changes nothing`);
    for (const t of m.tests) if (!existsSync(join(ROOT, t))) problems.push(`${m.name}: no test file ${t}`);
  }
  assert.deepEqual(problems, []);
  assert.equal(new Set(MUTANTS.map((m) => m.name)).size, MUTANTS.length, 'names are unique');
});
