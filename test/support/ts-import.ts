/**
 * The node flags that make a child process run the project's TypeScript as the tests do: the
 * loader of `scripts/ts-loader.mjs` (compiled once, loaded from its cache), named by its absolute
 * URL so that a child started in another directory finds it too.
 */
import { pathToFileURL } from 'node:url';

export const TS_LOADER = pathToFileURL(new URL('../../scripts/ts-loader.mjs', import.meta.url).pathname).href;

export const TS_IMPORT: readonly string[] = ['--import', TS_LOADER];
