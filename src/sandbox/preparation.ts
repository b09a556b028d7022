import { setImmediate as yieldToLoop } from "node:timers/promises";
import { getCountryCallingCode, parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js/max";
import type { ServiceType } from "../spec/products.js";
import { hasNoResult } from "./result-values.js";

/** What preparation found in a file. */
export interface Prepared {
  invalid: number;
  noCode: number;
  otherCountry: number;
  duplicate: number;
  /** How many identifiers were kept for checking. */
  keptCount: number;
  /**
   * The kept identifiers, first occurrence order, until the task's result file
   * is built: then the file holds them and they are released (`undefined`), so a
   * sandbox serving thousands of tasks keeps only their counts in memory.
   */
  kept: readonly string[] | undefined;
  /** How many kept numbers get no result (failure_cnt of a successful task). */
  noResult: number;
}

export interface PreparationInput {
  lines: readonly string[];
  /** "" for a carrier task sent without a country: numbers must carry their own code. */
  country: string;
  product: ServiceType;
  seed: number;
  noResultRate: number;
}

/** What the service makes of one line. */
type LineClass = { class: "kept"; identifier: string } | { class: "invalid" | "no_code" | "other_country" };

/** Lines classified between two yields to the event loop (about 50-70 ms of work). */
const LINES_PER_TURN = 2_000;
const WITH_CODE = /^\+?(\d+)$/;
/** Spaces, dashes, dots, brackets and slashes only format a number. */
const FORMATTING = /[\s\-.()/]/g;

/**
 * The service's own rule for one line, with plain libphonenumber-js (max) and
 * nothing of the client's preparation, so that end-to-end tests compare two
 * independent readings. A line is a number with its country code: digits, a
 * leading `+` allowed (spaces, dashes, dots, brackets and slashes only format it),
 * read as `+` and the digits. Valid that way, it is kept
 * when its calling code is the task country's (regions sharing the code, such as
 * GG under +44, belong to it), and `other_country` otherwise. A line valid only
 * as the library reads it with the task country as default (a trunk 0, or an
 * international prefix such as `00`, which is not the `+` the rule asks for) is
 * `no_code`; anything else is `invalid`.
 */
function classifyLine(line: string, country: string): LineClass {
  const text = line.trim();
  const digits = WITH_CODE.exec(text.replace(FORMATTING, ""))?.[1];
  const phone = digits === undefined ? undefined : parsePhoneNumberFromString("+" + digits);
  const home = country === "" ? undefined : getCountryCallingCode(country as CountryCode);
  if (phone?.isValid()) {
    if (home !== undefined && phone.countryCallingCode !== home) return { class: "other_country" };
    return { class: "kept", identifier: phone.countryCallingCode + phone.nationalNumber };
  }
  if (home === undefined) return { class: "invalid" };
  const national = parsePhoneNumberFromString(text, { defaultCountry: country as CountryCode, extract: false });
  return national?.isValid() && national.countryCallingCode === home ? { class: "no_code" } : { class: "invalid" };
}

/**
 * Classifies a task's lines (classifyLine), then dedups on the identifier among
 * kept numbers (a repeated invalid line counts as invalid again, not as a
 * duplicate). Works in slices, yielding between them, so a 500,000-line file
 * never blocks the server; stops with an AbortError when `signal` fires.
 */
export async function prepareLines(input: PreparationInput, signal: AbortSignal): Promise<Prepared> {
  const seen = new Set<string>();
  const kept: string[] = [];
  let invalid = 0;
  let noCode = 0;
  let otherCountry = 0;
  let duplicate = 0;
  let noResult = 0;
  for (let start = 0; start < input.lines.length; start += LINES_PER_TURN) {
    await yieldToLoop(undefined, { signal });
    for (const line of input.lines.slice(start, start + LINES_PER_TURN)) {
      const cell = classifyLine(line, input.country);
      if (cell.class === "kept") {
        if (seen.has(cell.identifier)) {
          duplicate += 1;
          continue;
        }
        seen.add(cell.identifier);
        kept.push(cell.identifier);
        if (hasNoResult(input.seed, input.product, cell.identifier, input.noResultRate)) noResult += 1;
      } else if (cell.class === "no_code") noCode += 1;
      else if (cell.class === "other_country") otherCountry += 1;
      else invalid += 1;
    }
  }
  return { invalid, noCode, otherCountry, duplicate, keptCount: kept.length, kept, noResult };
}
