import type { RowTally } from "./tally.js";

/** Distinct spans held before they are handed to the tally, which bounds memory on a file of all-different values. */
const MAX_SPANS = 4096;
/** Spans compared in place before the Map is consulted; result files repeat a handful of values. */
const RECENT_SPANS = 4;

/** One distinct span's count, valid until the next flush (its `generation`). */
export interface SpanEntry {
  span: string;
  /** The span's fields, when they hold commas and `span` is their JSON. */
  fields?: readonly string[];
  count: number;
  generation: number;
}

/**
 * Tallies rows cut straight out of CSV text. In a plain line (no quotes, so no comma
 * inside a field) the tallied columns and those between them are one span of text,
 * such as `carrier,underlying_carrier,number_type`; rows are counted per distinct span.
 * A span is first compared in place with the few last seen (no copy, no hashing), and
 * only a miss slices it out for the Map: hashing a fresh slice cost more than all the
 * rest of a row's handling.
 *
 * Rows that were parsed instead are counted in the same ordered Map: under the span
 * their fields would make, or, when one holds a comma, under the fields as JSON. Those
 * never meet: k fields without commas join with k-1 commas, while the JSON of k fields
 * one of which holds a comma has at least k.
 *
 * `flush` replays the entries into the RowTally in the order each was first seen. That
 * gives exactly the counts, and the same values folded into OTHER_VALUES, as adding
 * every row in turn, because a value's bucket is fixed by the values first seen before
 * it. Flush before any row is added to the tally directly, and at the end.
 */
export class SpanTally {
  /** The first and last tallied columns: a span runs from the start of one to the end of the other. */
  readonly from: number;
  readonly to: number;
  readonly #offsets: readonly number[];
  readonly #spans = new Map<string, SpanEntry>();
  #recent: SpanEntry[] = [];
  #nextRecent = 0;
  #generation = 0;

  constructor(private readonly tally: RowTally) {
    [this.from, this.to] = [tally.columns[0]!, tally.columns[tally.columns.length - 1]!];
    this.#offsets = tally.columns.map((column) => column - this.from);
  }

  /**
   * Counts a row by its span `text[start, end)` (empty for a row too short to reach the
   * first tallied column), and returns the span's entry for `repeat`.
   */
  add(text: string, start: number, end: number): SpanEntry {
    const length = end - start;
    for (const recent of this.#recent) {
      if (recent.span.length === length && text.startsWith(recent.span, start)) {
        recent.count += 1;
        return recent;
      }
    }
    const span = text.slice(start, end);
    let entry = this.#spans.get(span);
    if (entry) entry.count += 1;
    else this.#spans.set(span, (entry = { span, count: 1, generation: this.#generation }));
    this.#recent[this.#nextRecent] = entry;
    this.#nextRecent = (this.#nextRecent + 1) % RECENT_SPANS;
    if (this.#spans.size >= MAX_SPANS) this.flush();
    return entry;
  }

  /** Counts a parsed row, given in output column order and full width (as `arrangeRow` makes it). */
  addRow(row: readonly string[]): void {
    const fields = row.slice(this.from, this.to + 1);
    if (!fields.some((field) => field.includes(","))) {
      const span = fields.join(",");
      this.add(span, 0, span.length);
      return;
    }
    const key = JSON.stringify(fields);
    const entry = this.#spans.get(key);
    if (entry) entry.count += 1;
    else this.#spans.set(key, { span: key, fields, count: 1, generation: this.#generation });
    if (this.#spans.size >= MAX_SPANS) this.flush();
  }

  /** Counts one more row of an entry `add` returned; false, counting nothing, when a flush has made it stale. */
  repeat(entry: SpanEntry): boolean {
    if (entry.generation !== this.#generation) return false;
    entry.count += 1;
    return true;
  }

  flush(): void {
    for (const entry of this.#spans.values()) {
      const fields = entry.fields ?? entry.span.split(",");
      this.tally.addValues(this.#offsets.map((offset) => fields[offset] ?? ""), entry.count);
    }
    this.#spans.clear();
    [this.#recent, this.#nextRecent] = [[], 0];
    this.#generation += 1;
  }
}
