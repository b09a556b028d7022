import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { csvText } from "../csv/write.js";
import { openOutput } from "./output-file.js";
import type { RowClass } from "./classify.js";

/**
 * The rejects CSV: `line,value,class,reason`, one row for every row not in the
 * upload (blanks included, so rejects + kept = rows_read), `line` being the
 * physical line the source row starts on and `value` the cell exactly as read. With
 * `safeCsv` every cell that would start a formula is neutralised (the source's cells
 * can; bulkcheck's own words never do).
 */
export class RejectsWriter {
  private rows: Array<[number, string, string, string]> = [];
  private failure: Error | undefined;

  private constructor(
    private readonly out: WriteStream,
    private readonly verbatim: boolean,
  ) {
    out.on("error", (error) => {
      this.failure = error;
    });
  }

  static async create(path: string, options: { safeCsv: boolean }): Promise<RejectsWriter> {
    const handle = await openOutput(path, "rejects file");
    const writer = new RejectsWriter(handle.createWriteStream(), !options.safeCsv);
    writer.out.write("line,value,class,reason\n");
    return writer;
  }

  add(line: number, value: string, rowClass: RowClass, reason: string | undefined): void {
    this.rows.push([line, value, rowClass, reason ?? ""]);
  }

  /** Writes what was added, waiting while the file is behind. */
  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.rows.length === 0) return;
    const text = csvText(this.rows, { verbatim: this.verbatim });
    this.rows = [];
    if (!this.out.write(text)) await once(this.out, "drain");
  }

  async close(): Promise<void> {
    await this.flush();
    this.out.end();
    await once(this.out, "finish");
  }

  /** Releases the file without finishing it (after a failure); harmless after close(). */
  discard(): void {
    this.out.destroy();
  }
}
