import { InputRejectedError } from "../errors.js";

/**
 * A workbook's shared strings, held compactly: Excel keeps every distinct text of a workbook
 * once, in its shared strings part, and a million-row export holds millions of them. As JS
 * strings they cost several times their text (hundreds of MB, and a large live heap that makes
 * V8's growth, hence the peak, swing from run to run); here they are their UTF-8 bytes in a few
 * large Buffers, with one offset per string, and a string is made only when a cell asks for it.
 * sharedStringOf reads a string from what exceljs's streaming reader emits.
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
   * @throws InputRejectedError when the strings' text would pass 4 GiB (more than any workbook
   * Excel writes; the workbook reader refuses the file with this as the reason).
   */
  add(text: string): void {
    const start = this.#offsets[this.#count]!;
    const end = start + Buffer.byteLength(text, "utf8");
    if (end > MAX_BYTES) throw new InputRejectedError("its shared strings hold more than 4 GiB of text");
    if (this.#count + 1 === this.#offsets.length) {
      const grown = new Uint32Array(this.#offsets.length * 2);
      grown.set(this.#offsets);
      this.#offsets = grown;
    }
    while (this.#chunks.length * CHUNK_BYTES < end) this.#chunks.push(Buffer.allocUnsafe(CHUNK_BYTES));
    const chunk = this.#chunks[Math.floor(start / CHUNK_BYTES)]!;
    const at = start % CHUNK_BYTES;
    if (at + (end - start) <= CHUNK_BYTES) chunk.write(text, at, "utf8");
    else this.#copyIn(Buffer.from(text, "utf8"), start);
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
 * The text of the shared string an item of exceljs's `reader.parse()` carries, else undefined.
 * Its README documents `{ eventType: "shared-strings", value }`; exceljs 4.4.0 yields
 * `{ index, text }` without an eventType (workbook-reader.js, _parseSharedStrings). Both come in
 * index order, so the table's order is theirs.
 */
export function sharedStringOf(item: unknown): string | undefined {
  if (typeof item !== "object" || item === null) return undefined;
  if ("eventType" in item) return item.eventType === "shared-strings" && "value" in item ? sharedText(item.value) : undefined;
  return "index" in item && "text" in item ? sharedText(item.text) : undefined;
}

/**
 * A shared string as exceljs emits it (text, `{ richText }` whose runs are joined as the cache
 * path joins them, null when empty, or wrapped as `{ index, text }`), with its `_xHHHH_`
 * escapes left for cellText to decode once, when a cell is read.
 */
function sharedText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return "";
  const runs: unknown = "richText" in value ? value.richText : undefined;
  if (Array.isArray(runs)) return runs.map((run: { text?: unknown }) => sharedText(run.text)).join("");
  return "text" in value ? sharedText(value.text) : "";
}

/** 8 MiB: a few chunks for a million-row workbook's strings, little left unused at the end. */
const CHUNK_BYTES = 8 * 1024 * 1024;
const INITIAL_STRINGS = 1024;
/** The largest offset a Uint32Array holds. */
const MAX_BYTES = 0xffff_ffff;
