// Terminal styling that respects NO_COLOR (https://no-color.org) and non-TTY output.

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  good(s: string): string;
  bad(s: string): string;
  warn(s: string): string;
}

const plainStyle: Style = { bold: (s) => s, dim: (s) => s, good: (s) => s, bad: (s) => s, warn: (s) => s };

export function styleFor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): Style {
  const color = stream.isTTY === true && !('NO_COLOR' in env && env.NO_COLOR !== '') && env.TERM !== 'dumb';
  if (!color) return plainStyle;
  const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;
  return { bold: wrap(1, 22), dim: wrap(2, 22), good: wrap(32, 39), bad: wrap(31, 39), warn: wrap(33, 39) };
}

export { plainStyle };
