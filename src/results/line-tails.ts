import type { SpanEntry } from "./span-tally.js";

/** Distinct tails remembered; result files repeat a handful (`true`, `Three,Three,mobile,GB,,`). */
const RECENT_TAILS = 8;

/** What a plain line's tail (its text after the first comma) says about the row. */
export interface TailFacts {
  fields: number;
  /** The tallied span, as offsets from the tail's start. */
  spanStart: number;
  spanEnd: number;
  /** The span's tally entry, when it was last counted; reused while still current. */
  entry: SpanEntry | undefined;
}

interface Tail {
  /** The tail with its line end, so an occurrence at a tail's start covers the whole rest of that line. */
  text: string;
  facts: TailFacts;
  /** Where `text` next occurs in the current text, at or after the line being read; -1 when not yet searched. */
  next: number;
}

/**
 * The last few distinct line tails. Recognising a tail tells a plain line's field count
 * and tallied span without walking its commas or comparing text: for each tail the
 * scanner keeps where it next occurs (one native search that resumes where it stopped,
 * so each is a single pass over the text), and a line whose tail starts right there is
 * a hit. Comparing strings in place cost ten times a search on the machine measured.
 */
export class RecentTails {
  readonly #tails: Tail[] = [];
  #oldest = 0;
  #text = "";

  /** Starts on a new text: every occurrence is searched for afresh. */
  begin(text: string): void {
    this.#text = text;
    for (const tail of this.#tails) tail.next = -1;
  }

  /** The facts of the line whose tail runs from `start` through its line end, if that tail is a recent one. */
  find(start: number): TailFacts | undefined {
    for (const tail of this.#tails) {
      if (tail.next < start) {
        const at = this.#text.indexOf(tail.text, start);
        tail.next = at < 0 ? this.#text.length : at;
      }
      if (tail.next === start) return tail.facts;
    }
    return undefined;
  }

  /** Remembers the tail `[start, next)` of the current text (line end included), replacing the oldest. */
  remember(start: number, next: number, facts: TailFacts): void {
    const tail = { text: this.#text.slice(start, next), facts, next: start };
    if (this.#tails.length < RECENT_TAILS) this.#tails.push(tail);
    else this.#tails[this.#oldest] = tail;
    this.#oldest = (this.#oldest + 1) % RECENT_TAILS;
  }
}
