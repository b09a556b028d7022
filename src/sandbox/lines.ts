import { StringDecoder } from "node:string_decoder";

const BLANK = /^[\s\u00a0\u200b\ufeff]*$/;
const LINE_BREAK = /\r\n|\r|\n/;

/**
 * Splits an uploaded file, chunk by chunk, into its non-blank lines (the spec's
 * "one identifier per line"). Blank lines are not counted anywhere: not in
 * submitted_lines, not in the task size limits, not in the reservation.
 */
export class LineCollector {
  readonly lines: string[] = [];
  private readonly decoder = new StringDecoder("utf8");
  private rest = "";

  push(chunk: Buffer): void {
    const text = this.decoder.write(chunk);
    if (!LINE_BREAK.test(text)) {
      // No line ends here: append without re-splitting the growing line (keeps one huge line linear).
      this.rest += text;
      return;
    }
    const parts = (this.rest + text).split(LINE_BREAK);
    // A chunk may end between "\r" and "\n"; the empty line that makes is blank and dropped.
    this.rest = parts.pop() ?? "";
    for (const line of parts) this.add(line);
  }

  end(): void {
    this.add(this.rest + this.decoder.end());
    this.rest = "";
  }

  private add(line: string): void {
    if (!BLANK.test(line)) this.lines.push(line);
  }
}
