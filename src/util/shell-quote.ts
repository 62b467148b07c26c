// Command lines the tool prints for a user to paste (kubectl lines, hints): every word that
// is not plainly safe is single-quoted, so a value with a space, `;`, `$` or a newline stays
// one word and runs nothing.

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word as POSIX sh reads it back unchanged. */
export function shellQuote(word: string): string {
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Words joined into one command line for sh. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(' ');
}
