import type { ZipLimits } from "../results/unzip.js";
import { MAX_CELL_CHARS } from "../results/xlsx-xml.js";
import { MAX_STORED_CELL_CHARS, showsMoreThanACell } from "./cell-text.js";
import type { WorkbookPackage } from "./workbook-package.js";
import type { XmlHandlers } from "./workbook-xml.js";

/**
 * A workbook's shared strings, held compactly: Excel keeps every distinct text of a workbook
 * once, in its shared strings part, and a million-row export holds millions of them. As JS
 * strings they cost several times their text (hundreds of MB, and a large live heap that makes
 * V8's growth, hence the peak, swing from run to run); here they are their UTF-8 bytes in a few
 * large Buffers, with one offset per string, and a string is made only when a cell asks for it.
 */
export class SharedStringTable {
  /** The bytes of all strings one after another, split across chunks of CHUNK_BYTES (a string may straddle two or more). */
  readonly #chunks: Buffer[] = [];
  /** Where string i starts in those bytes is offsets[i]; it ends where string i + 1 starts. */
  #offsets = new Uint32Array(INITIAL_STRINGS + 1);
  #count = 0;

  /** How many strings the table holds (indexes 0 to size - 1). */
  get size(): number {
    return this.#count;
  }

  /**
   * Adds the next string (index `size`).
   * @throws RangeError past 4 GiB of text, which the shared strings part's size limit keeps it from.
   */
  add(text: string): void {
    const start = this.#offsets[this.#count]!;
    const end = start + Buffer.byteLength(text, "utf8");
    if (end > MAX_BYTES) throw new RangeError("shared strings past 4 GiB");
    if (this.#count + 1 === this.#offsets.length) {
      const grown = new Uint32Array(this.#offsets.length * 2);
      grown.set(this.#offsets);
      this.#offsets = grown;
    }
    while (this.#chunks.length * CHUNK_BYTES < end) this.#chunks.push(Buffer.allocUnsafe(CHUNK_BYTES));
    const at = start % CHUNK_BYTES;
    // An empty string has no bytes to write, and may start where no chunk is yet (first in the table, or at a chunk's end).
    if (end > start) {
      if (at + (end - start) <= CHUNK_BYTES) this.#chunks[Math.floor(start / CHUNK_BYTES)]!.write(text, at, "utf8");
      else this.#copyIn(Buffer.from(text, "utf8"), start);
    }
    this.#offsets[++this.#count] = end;
  }

  /** String `index`, or undefined when the table holds no such string. */
  get(index: number): string | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.#count) return undefined;
    const start = this.#offsets[index]!;
    const end = this.#offsets[index + 1]!;
    const first = Math.floor(start / CHUNK_BYTES);
    const at = start % CHUNK_BYTES;
    if (at + (end - start) <= CHUNK_BYTES) return this.#chunks[first]!.toString("utf8", at, at + (end - start));
    const bytes = Buffer.allocUnsafe(end - start);
    for (let done = 0; done < bytes.length;) {
      const from = (start + done) % CHUNK_BYTES;
      done += this.#chunks[Math.floor((start + done) / CHUNK_BYTES)]!.copy(
        bytes,
        done,
        from,
        Math.min(CHUNK_BYTES, from + bytes.length - done),
      );
    }
    return bytes.toString("utf8");
  }

  /** Copies a string's bytes that straddle chunks into place from `start`. */
  #copyIn(bytes: Buffer, start: number): void {
    for (let done = 0; done < bytes.length;) {
      const at = (start + done) % CHUNK_BYTES;
      done += bytes.copy(this.#chunks[Math.floor((start + done) / CHUNK_BYTES)]!, at, done);
    }
  }
}

/**
 * The shared strings part's limits: it is held whole (as UTF-8, about its text's size), so
 * it is bounded below the table's 4 GiB; Excel's own for a million rows of distinct text in
 * three columns is about 100 MB.
 */
const SHARED_STRINGS_LIMITS: ZipLimits = { maxUncompressedBytes: 1024 ** 3, maxCompressionRatio: 200 };

/**
 * Reads a workbook's shared strings part into a table: each `<si>`'s text, rich text's runs
 * joined, its phonetic guide (`<rPh>`, the reading of Japanese text) left out, as Excel shows
 * it; `_xHHHH_` escapes are left for cellText to decode when a cell is read.
 * @throws InputRejectedError for a string longer than Excel allows in a cell, or a part
 *   that cannot be read.
 */
export async function readSharedStrings(workbook: WorkbookPackage, part: string, signal?: AbortSignal): Promise<SharedStringTable> {
  const strings = new SharedStringsPart((index) =>
    workbook.unreadable(
      `${part} holds a string (number ${index + 1}) of more than ${MAX_CELL_CHARS.toLocaleString("en-US")} characters, Excel's limit for a cell`,
    ),
  );
  for await (const _ of workbook.readXml(part, strings, SHARED_STRINGS_LIMITS, signal)) {
    // the handlers fill the table
  }
  return strings.table;
}

/** The handlers filling a table from a shared strings part (`<sst><si><t>…</t></si>…`). */
export class SharedStringsPart implements XmlHandlers {
  readonly table = new SharedStringTable();
  /** The text of the `<si>` being read; undefined outside one. */
  #text: string | undefined;
  #inText = false;
  #inPhonetic = false;

  constructor(private readonly tooLong: (index: number) => Error) {}

  open(name: string): void {
    if (name === "si") this.#text = "";
    else if (name === "t") this.#inText = this.#text !== undefined && !this.#inPhonetic;
    else if (name === "rPh") this.#inPhonetic = true;
  }

  close(name: string): void {
    if (name === "t") this.#inText = false;
    else if (name === "rPh") this.#inPhonetic = false;
    else if (name === "si" && this.#text !== undefined) {
      if (showsMoreThanACell(this.#text)) throw this.tooLong(this.table.size);
      this.table.add(this.#text);
      this.#text = undefined;
    }
  }

  text(text: string): void {
    if (!this.#inText) return;
    this.#text += text;
    if (this.#text!.length > MAX_STORED_CELL_CHARS) throw this.tooLong(this.table.size);
  }
}

/** 8 MiB: a few chunks for a million-row workbook's strings, little left unused at the end. */
const CHUNK_BYTES = 8 * 1024 * 1024;
const INITIAL_STRINGS = 1024;
/** The largest offset a Uint32Array holds. */
const MAX_BYTES = 0xffff_ffff;
