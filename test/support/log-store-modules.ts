/**
 * What the tests' child processes of the log store import (`stopped-child.ts`, crash-keys.test.ts),
 * bundled into one ES module (`bundled(…, 'mjs')`, server-entry.ts): through the TypeScript loader
 * each child took about 0.35 s more of CPU to start, and the crash tests start dozens. Coverage
 * does not count these bundles (`npm test`'s `--include`): they hold test code beside `src/`, and
 * the code of `src/` they run is run by other tests too (99.06 % of lines with them and without).
 */
export { createLogger } from '../../src/log.ts';
export { nodeFs } from '../../src/store/log/fs.ts';
export { LogEngine } from '../../src/store/log/log-engine.ts';
export { LogLinkStore } from '../../src/store/log/log-link-store.ts';
