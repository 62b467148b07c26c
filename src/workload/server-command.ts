// `--server-command CMD` → the container's command: `/bin/sh -c SCRIPT`. The shell gives every
// ordinary form (`node s.js`, `PORT=9 node s.js`, `cd dir && node s.js`, quotes, `$VAR`), and
// `exec` keeps the *server* — not a shell — as the container's main process (PID 1), the one
// the kubelet's SIGTERM reaches. So `exec` goes before the command the shell runs last, where
// that is certain to keep the meaning:
//   - a simple command (assignments, then words): `PORT=9 exec node s.js`;
//   - a list (`;`, `&&`, `||`) whose last part is a simple command: `cd dir && exec node s.js`
//     (the last part is always the shell's last act: exec changes nothing but the pid);
//   - anything else — a pipeline, `&`, `( )`, `{ }`, `if`/`for`/`while`/`case`, `trap`, `wait`,
//     a here-document — runs as written: the shell stays PID 1, and as in a container whose
//     command is `sh -c '…'` it ignores SIGTERM (PID 1 has no default signal actions), so the
//     server gets no SIGTERM, only SIGKILL at the end of the grace period.

export interface ServerScript {
  /** What `/bin/sh -c` runs. */
  script: string;
  /** `command`: the whole command is exec'd; `last`: the last command of a list; `none`: run as written. */
  exec: 'command' | 'last' | 'none';
}

const RESERVED = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'case',
  'esac',
  'while',
  'until',
  'for',
  'in',
  'function',
  'select',
  '{',
  '}',
  '!',
  '[[',
  ']]',
]);
/** The shell handles signals or children itself: replacing it would change what the command means. */
const SHELL_OWNS_SIGNALS = new Set(['trap', 'wait']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

interface Word {
  text: string;
  start: number;
}
interface Part {
  words: Word[];
}

/** The top-level list parts of `command` (split at `;`, `&&`, `||`, newlines), or null when it is not a plain list. */
function listParts(command: string): Part[] | null {
  const parts: Part[] = [{ words: [] }];
  let word: Word | null = null;
  const current = () => parts[parts.length - 1]!;
  const endWord = () => {
    if (word) current().words.push(word);
    word = null;
  };
  const addChar = (i: number, text: string) => {
    word ??= { text: '', start: i };
    word.text += text;
  };
  for (let i = 0; i < command.length; i += 1) {
    const c = command[i]!;
    if (c === '\\') {
      addChar(i, command.slice(i, i + 2));
      i += 1;
    } else if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end < 0) return null;
      addChar(i, command.slice(i, end + 1));
      i = end;
    } else if (c === '"' || c === '`') {
      let j = i + 1;
      while (j < command.length && command[j] !== c) j += command[j] === '\\' ? 2 : 1;
      if (j >= command.length) return null;
      addChar(i, command.slice(i, j + 1));
      i = j;
    } else if (c === '$' && command[i + 1] === '(') {
      // $( … ) or $(( … )): skip to the matching parenthesis (quotes inside are rare; refuse them).
      let depth = 0;
      let j = i + 1;
      for (; j < command.length; j += 1) {
        if (command[j] === "'" || command[j] === '"' || command[j] === '`') return null;
        if (command[j] === '(') depth += 1;
        else if (command[j] === ')' && --depth === 0) break;
      }
      if (j >= command.length) return null;
      addChar(i, command.slice(i, j + 1));
      i = j;
    } else if ((c === '&' || c === '|') && (command[i - 1] === '>' || command[i - 1] === '<')) {
      addChar(i, c); // a redirection: 2>&1, <&0, >|
    } else if (c === ' ' || c === '\t') endWord();
    else if (c === '#' && !word)
      break; // a comment to the end: nothing after it runs
    else if (
      c === ';' ||
      c === '\n' ||
      (c === '&' && command[i + 1] === '&') ||
      (c === '|' && command[i + 1] === '|')
    ) {
      endWord();
      if (c === '&' || c === '|') i += 1;
      if (command[i + 1] === ';') return null; // `;;` belongs to case
      parts.push({ words: [] });
    } else if (c === '&' || c === '|' || c === '(' || c === ')' || (c === '<' && command[i + 1] === '<')) {
      return null; // background, pipeline, subshell, here-document
    } else addChar(i, c);
  }
  endWord();
  // `cmd;` or `cmd &&` followed by nothing: a trailing empty part runs nothing.
  while (parts.length > 1 && parts[parts.length - 1]!.words.length === 0) parts.pop();
  return parts;
}

/** The script `/bin/sh -c` runs for `--server-command`, with `exec` where it keeps the meaning. */
export function serverScript(command: string): ServerScript {
  const asWritten: ServerScript = { script: command, exec: 'none' };
  const parts = listParts(command);
  if (!parts) return asWritten;
  for (const part of parts) {
    const first = part.words.find((w) => !ASSIGNMENT.test(w.text));
    if (first && (RESERVED.has(first.text) || SHELL_OWNS_SIGNALS.has(first.text))) return asWritten;
  }
  const last = parts[parts.length - 1]!;
  const commandWord = last.words.find((w) => !ASSIGNMENT.test(w.text));
  if (!commandWord) return asWritten; // ends with `;`, or only assignments
  const exec: ServerScript['exec'] = parts.length === 1 ? 'command' : 'last';
  if (commandWord.text === 'exec') return { script: command, exec };
  const at = commandWord.start;
  return { script: `${command.slice(0, at)}exec ${command.slice(at)}`, exec };
}
