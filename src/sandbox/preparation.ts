import { existsSync } from "node:fs";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
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
 * duplicate). A big upload is classified by a worker thread, so the sandbox
 * answers requests (and keeps its own clock) while several arrive at once; a
 * small one, or any from TypeScript sources (vitest), where no compiled worker
 * exists, in slices on this thread, yielding between them. Stops with an
 * AbortError when `signal` fires.
 */
export async function prepareLines(input: PreparationInput, signal: AbortSignal): Promise<Prepared> {
  const script = input.lines.length >= IN_WORKER_FROM ? workerScript() : undefined;
  if (script) return prepareInWorker(script, input, signal);
  const tally = new LineTally(input);
  for (let start = 0; start < input.lines.length; start += LINES_PER_TURN) {
    await yieldToLoop(undefined, { signal });
    for (const line of input.lines.slice(start, start + LINES_PER_TURN)) tally.add(line);
  }
  return tally.prepared();
}

/** Every line classified at once: what the worker thread does (classify-lines-worker.ts). */
export function prepareAllLines(input: PreparationInput): Prepared {
  const tally = new LineTally(input);
  for (const line of input.lines) tally.add(line);
  return tally.prepared();
}

/** Uploads of at least this many lines are classified off the event loop (on it, 20,000 lines take about half a second). */
const IN_WORKER_FROM = 20_000;

/** The compiled worker next to this module, or undefined when running from TypeScript sources (vitest). */
function workerScript(): URL | undefined {
  const url = new URL("./classify-lines-worker.js", import.meta.url);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

function prepareInWorker(script: URL, input: PreparationInput, signal: AbortSignal): Promise<Prepared> {
  signal.throwIfAborted();
  const worker = new Worker(script, { workerData: input });
  let stop!: () => void;
  return new Promise<Prepared>((resolve, reject) => {
    stop = () => reject(signal.reason as Error);
    signal.addEventListener("abort", stop, { once: true });
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", () => reject(new Error("the sandbox's classification worker stopped before it answered")));
  }).finally(() => {
    signal.removeEventListener("abort", stop);
    void worker.terminate();
  });
}

/** What preparation finds, line by line. */
class LineTally {
  readonly #seen = new Set<string>();
  readonly #kept: string[] = [];
  #invalid = 0;
  #noCode = 0;
  #otherCountry = 0;
  #duplicate = 0;
  #noResult = 0;

  constructor(private readonly input: PreparationInput) {}

  add(line: string): void {
    const { input } = this;
    const cell = classifyLine(line, input.country);
    if (cell.class === "kept") {
      if (this.#seen.has(cell.identifier)) {
        this.#duplicate += 1;
        return;
      }
      this.#seen.add(cell.identifier);
      this.#kept.push(cell.identifier);
      if (hasNoResult(input.seed, input.product, cell.identifier, input.noResultRate)) this.#noResult += 1;
    } else if (cell.class === "no_code") this.#noCode += 1;
    else if (cell.class === "other_country") this.#otherCountry += 1;
    else this.#invalid += 1;
  }

  prepared(): Prepared {
    return {
      invalid: this.#invalid,
      noCode: this.#noCode,
      otherCountry: this.#otherCountry,
      duplicate: this.#duplicate,
      keptCount: this.#kept.length,
      kept: this.#kept,
      noResult: this.#noResult,
    };
  }
}
