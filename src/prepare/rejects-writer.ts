import { once } from "node:events";
import type { WriteStream } from "node:fs";
import { csvText } from "../csv/write.js";
import { asOutputWriteError } from "../file-system-errors.js";
import { openOutput } from "./output-file.js";
import type { AdmittedRow } from "./block-classifier.js";

/**
 * The rejects CSV: `line,value,class,reason,record` and the source's id column, one row
 * for every row not in the upload (blanks included, so rejects + kept = rows_read):
 * `line` is the physical line the source row starts on (a quoted cell may span lines),
 * `value` the cell exactly as read, `record` the row's number among the data rows (1 =
 * the first after the header; the last is rows_read), and the last column, headed
 * `source:` and the source column's name, that column's cell (see chooseIdColumn), so a
 * person can find the record. The first four columns stay first and in this order.
 * With `safeCsv` every cell that would start a formula is neutralised (the source's cells
 * can; bulkcheck's own words never do).
 */
export class RejectsWriter {
  private rows: string[][] = [];
  private failure: Error | undefined;

  private constructor(
    path: string,
    private readonly out: WriteStream,
    private readonly withId: boolean,
    private readonly verbatim: boolean,
  ) {
    out.on("error", (error) => {
      this.failure = asOutputWriteError(error, path);
    });
  }

  /** `idLabel`: the name of the source column that identifies a record; none for a list of one column. */
  static async create(path: string, options: { idLabel: string | undefined; safeCsv: boolean }): Promise<RejectsWriter> {
    const handle = await openOutput(path, "rejects file");
    const { idLabel } = options;
    const writer = new RejectsWriter(path, handle.createWriteStream(), idLabel !== undefined, !options.safeCsv);
    const header = ["line", "value", "class", "reason", "record", ...(idLabel === undefined ? [] : [`source:${idLabel}`])];
    writer.out.write(csvText([header], { verbatim: writer.verbatim }));
    return writer;
  }

  add(row: Pick<AdmittedRow, "line" | "value" | "class" | "reason" | "id">, record: number): void {
    const fields = [String(row.line), row.value ?? "", row.class, row.reason ?? "", String(record)];
    if (this.withId) fields.push(row.id ?? "");
    this.rows.push(fields);
  }

  /** Writes what was added, waiting while the file is behind. */
  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.rows.length === 0) return;
    const text = csvText(this.rows, { verbatim: this.verbatim });
    this.rows = [];
    if (!this.out.write(text)) await this.settled("drain");
  }

  async close(): Promise<void> {
    await this.flush();
    this.out.end();
    await this.settled("finish");
  }

  /** Waits for `event`; a write the file system refused (no space, a quota) is a FileSystemError naming the file. */
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
