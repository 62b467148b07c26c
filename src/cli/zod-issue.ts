// A failed zod parse of command-line input as one line: the first issue, with its path.
import type { ZodError } from 'zod';

export function firstIssue(error: ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'bad value'}`;
}
