// Every module Node loads by static imports from an entry, read from the compiled JavaScript
// (type-only imports are gone there): what a process pays for before its first line runs.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Every module loaded by static imports from `entry`, and the packages they name. */
export function staticClosure(entry: URL): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const queue = [entry];
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < 2000) {
    const url = queue.pop()!;
    if (seen.has(url.href)) continue;
    seen.add(url.href);
    files.push(fileURLToPath(url));
    const source = readFileSync(url, 'utf8');
    // Static `import … from '…'`, `import '…'` and `export … from '…'`; never `import('…')`.
    for (const m of source.matchAll(/^\s*(?:import|export)\s(?:[^'"();]*?\sfrom\s)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) queue.push(new URL(spec, url));
      else packages.add(spec);
    }
  }
  return { files, packages };
}
