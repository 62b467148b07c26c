// The package version, read once from package.json so `--version` and run documents agree.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
export const version: string = pkg.version;
