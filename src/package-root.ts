/**
 * The package's root folder, where `package.json`, `static/` and `schemas/` are: a file URL ending
 * in a slash.
 *
 * Every file that needs one of them resolves it here, never against its own `import.meta.url`:
 * this module sits one level below the root in each layout it runs in — `src/` (tests), `dist/`
 * (the compiled library) and `dist/server.js`, the server bundled into one file (see
 * `scripts/bundle-server.mjs`), where every module shares the bundle's `import.meta.url`.
 */
export const PACKAGE_ROOT = new URL('../', import.meta.url);
