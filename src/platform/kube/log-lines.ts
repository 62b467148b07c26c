// A Writable that cuts a log stream into lines. client-node's Log pipes the response body
// into it. The first `skip` complete lines are dropped (a reopened stream replays the
// container's log from its start); a last line without a newline — the kubelet's
// `rpc error: ... not found` when it loses the race with container removal — is kept in
// `partial` until the caller decides the stream is really over.
import { StringDecoder } from 'node:string_decoder';
import { Writable } from 'node:stream';

export class LineWriter extends Writable {
  /** Complete lines seen on this stream, skipped ones included. */
  lines = 0;
  partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly skip: number,
    private readonly onLine: (line: string) => void,
    private readonly onActivity: () => void = () => undefined,
  ) {
    super();
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

  private take(text: string): void {
    let rest = this.partial + text;
    let newline: number;
    while ((newline = rest.indexOf('\n')) >= 0) {
      const line = rest.slice(0, newline);
      rest = rest.slice(newline + 1);
      this.lines += 1;
      if (this.lines > this.skip) this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    this.partial = rest;
  }
}
