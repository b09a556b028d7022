import { createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import yazl from "yazl";
import { csvText } from "../csv/write.js";
import { resultColumns, type ServiceType } from "../spec/products.js";
import type { Prepared } from "./preparation.js";
import { resultRows } from "./result-values.js";
import { resultFileName } from "./task-view.js";

export interface ResultFile {
  path: string;
  size: number;
}

export interface ResultSource {
  id: string;
  /** 1-based submission order: with the seed, which numbers' results drift in this task. */
  ordinal: number;
  product: ServiceType;
  createdAtMs: number;
  prepared: Prepared;
}

/** The sandbox is the service: its result files hold the values as it made them. */
const SERVED_AS_BUILT = { verbatim: true } as const;

/** Rows written between two yields to the event loop (carrier rows cost ~30 µs each). */
const ROWS_PER_TURN = 2_000;

/**
 * Result files, built once per task into the sandbox's temp directory on the
 * first download and then streamed from disk, so a million-row result never sits
 * in memory and the response has a Content-Length; once built, the task's
 * numbers are released from memory. Concurrent first downloads
 * share one build. A zip holds the CSV as `{id}.csv`, stamped with the task's
 * creation time (not the build time), so only the entry name differs between
 * two runs with the same seed and clock; the CSV itself is byte-identical.
 */
export class ResultFiles {
  private readonly builds = new Map<string, Promise<ResultFile>>();

  constructor(
    private readonly dir: string,
    private readonly format: "csv" | "zip",
    private readonly seed: number,
    private readonly noResultRate: number,
    /** Share of numbers whose result differs from their usual one in a task (see resultRowInTask). */
    private readonly drift: number,
    private readonly signal: AbortSignal,
  ) {}

  file(source: ResultSource): Promise<ResultFile> {
    let build = this.builds.get(source.id);
    if (!build) {
      build = this.build(source);
      this.builds.set(source.id, build);
      build.catch(() => this.builds.delete(source.id));
    }
    return build;
  }

  private async build(source: ResultSource): Promise<ResultFile> {
    const file = await this.write(source);
    // The file holds the task's numbers now; memory keeps only its counts.
    source.prepared.kept = undefined;
    return file;
  }

  private async write(source: ResultSource): Promise<ResultFile> {
    const signal = this.signal;
    const csvPath = join(this.dir, resultFileName(source.id, "csv"));
    await pipeline(Readable.from(this.csvChunks(source)), createWriteStream(csvPath, { mode: 0o600 }), { signal });
    if (this.format === "csv") return { path: csvPath, size: (await stat(csvPath)).size };
    const zipPath = join(this.dir, resultFileName(source.id, "zip"));
    const zip = new yazl.ZipFile();
    zip.addFile(csvPath, resultFileName(source.id, "csv"), { mtime: new Date(source.createdAtMs), mode: 0o100644 });
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(zipPath, { mode: 0o600 }), { signal });
    return { path: zipPath, size: (await stat(zipPath)).size };
  }

  /** The CSV in pieces of ROWS_PER_TURN rows, yielding to the event loop between pieces. */
  private async *csvChunks(source: ResultSource): AsyncGenerator<string> {
    const kept = source.prepared.kept;
    // Released only once a build succeeded, and a built file is never built again.
    if (!kept) throw new Error(`the numbers of task ${source.id} were released before its result file was built`);
    let rows: Array<readonly string[]> = [resultColumns(source.product)];
    for (const row of resultRows(this.seed, source.product, kept, this.noResultRate, { ordinal: source.ordinal, drift: this.drift })) {
      if (rows.push(row) < ROWS_PER_TURN) continue;
      yield csvText(rows, SERVED_AS_BUILT);
      rows = [];
      await yieldToLoop(undefined, { signal: this.signal });
    }
    yield csvText(rows, SERVED_AS_BUILT);
  }
}
