/** The package's name and version, read once from package.json (beside `src/` and `dist/`). */
import { readFileSync } from 'node:fs';
import { PACKAGE_ROOT } from './package-root.ts';

export const NAME = 'url-shortener';

export const VERSION: string = (JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as { version: string }).version;
