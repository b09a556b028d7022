import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { csvText } from "../csv/write.js";
import { asOutputWriteError } from "../results/errors.js";
import { openOutput } from "./output-file.js";
import type { RowClass } from "./classify.js";

/**
 * The rejects CSV: `line,value,class,reason`, one row for every row not in the
 * upload (blanks included, so rejects + kept = rows_read), `line` being the
 * physical line the source row starts on and `value` the cell exactly as read.
 */
export class RejectsWriter {
  private rows: Array<[number, string, string, string]> = [];
  private failure: Error | undefined;

  private constructor(
    path: string,
    private readonly out: WriteStream,
  ) {
    out.on("error", (error) => {
      this.failure = asOutputWriteError(error, path);
    });
  }

  static async create(path: string): Promise<RejectsWriter> {
    const handle = await openOutput(path, "rejects file");
    const writer = new RejectsWriter(path, handle.createWriteStream());
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
    const text = csvText(this.rows);
    this.rows = [];
    if (!this.out.write(text)) await this.settled("drain");
  }

  async close(): Promise<void> {
    await this.flush();
    this.out.end();
    await this.settled("finish");
  }

  /** Waits for `event`; a write the file system refused (no space, a quota) is an OutputWriteError naming the file. */
  private async settled(event: "drain" | "finish"): Promise<void> {
    await once(this.out, event).catch((error: unknown) => {
      throw this.failure ?? error;
    });
  }

  /** Releases the file without finishing it (after a failure); harmless after close(). */
  discard(): void {
    this.out.destroy();
  }
}
