/** The package's name and version, read once from package.json (beside `src/` and `dist/`). */
import { readFileSync } from 'node:fs';

export const NAME = 'url-shortener';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
