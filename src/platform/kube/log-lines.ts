// A Writable that cuts a log stream into lines. client-node's Log pipes the response body
// into it. The first `skip` complete lines are dropped (a reopened stream replays the
// container's log from its start); a last line without a newline — the kubelet's
// `rpc error: ... not found` when it loses the race with container removal — is kept in
// `partial` until the caller decides the stream is really over. A line is held only up to the
// journal line limit (the rest is dropped and counted: see LineSplitter); it still counts as
// one line when its newline arrives.
import { StringDecoder } from 'node:string_decoder';
import { Writable } from 'node:stream';
import { JOURNAL_LINE_MAX_CHARS } from '../../server/journal.js';
import { LineSplitter } from '../../util/line-splitter.js';

export class LineWriter extends Writable {
  /** Complete lines seen on this stream, skipped ones included. */
  lines = 0;
  private readonly decoder = new StringDecoder('utf8');
  private readonly splitter: LineSplitter;

  constructor(
    private readonly skip: number,
    private readonly onLine: (line: string) => void,
    private readonly onActivity: () => void = () => undefined,
    maxChars = JOURNAL_LINE_MAX_CHARS,
  ) {
    super();
    this.splitter = new LineSplitter(
      maxChars,
      (line) => {
        this.lines += 1;
        if (this.lines > this.skip) this.onLine(line);
      },
      true,
    );
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.onActivity();
    this.take(this.decoder.write(chunk));
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.take(this.decoder.end());
    callback();
  }

  /** The last line, not (yet) ended by a newline; '' if there is none. */
  get partial(): string {
    return this.splitter.partial;
  }

  private take(text: string): void {
    this.splitter.push(text);
  }
}
