import type { CountryCode } from "libphonenumber-js/max";
import { terminalText } from "../../../ansi.js";
import type { ForcedEncoding } from "../../../csv/encodings.js";
import { UsageError } from "../../../errors.js";
import { isKnownCountry, prepareList, type DigitsReading, type PrepareOptions, type PrepareResult } from "../../../prepare/index.js";
import { closestMatch, didYouMean } from "../../../did-you-mean.js";
import { mainCountryOf } from "../../../prepare/country-groups.js";
import { suggestCountry } from "../../../prepare/country-names.js";
import type { PrepareSummary } from "../../../prepare/summary.js";
import { count } from "../../../format-count.js";
import { canonicalServiceType, isCarrierProduct, SERVICE_TYPE_ALIASES, SERVICE_TYPES, type ServiceType } from "../../../spec/products.js";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { createProgress } from "../../progress.js";

export interface PreparationFlags {
  country?: string;
  /** With `--country auto`: the country of the numbers written nationally. */
  defaultCountry?: string;
  column?: string;
  requireCountryCode?: boolean;
  strictRegion?: boolean;
  digitsAs?: DigitsReading;
  encoding?: ForcedEncoding;
  /** The sheet of an Excel workbook: a name, or a number from 1. */
  sheet?: string;
  /** A path, or `-` for stdout. */
  rejects?: string;
  /** Replace a --rejects file (and validate's -o) that exists. */
  force?: boolean;
  /** --safe-csv: neutralise the source's formula-like cells in the rejects (and, in submit, a join). */
  safeCsv?: boolean;
  /** Worker threads for classification (default 0: in this thread). */
  threads?: number;
}

/**
 * A product flag's value (--type, or the ledger's --product, named by `flag` in the message)
 * as the service's canonical product code; unknown → usage error (exit 2) with the likely
 * product and the list of them.
 */
export function productFromFlag(type: string, flag: "--type" | "--product" = "--type"): ServiceType {
  const product = canonicalServiceType(type.trim());
  if (!product) {
    // An alias in another case or misspelt (Global_Carrier_Batch) means its product too.
    const meant = closestMatch(type, SERVICE_TYPES) ?? canonicalServiceType(closestMatch(type, Object.keys(SERVICE_TYPE_ALIASES)) ?? "");
    throw new UsageError(`Unknown ${flag} "${type}".${didYouMean(meant)}`, {
      hint: `Products: ${SERVICE_TYPES.join(", ")}`,
    });
  }
  return product;
}

/** --country as an ISO 3166-1 code; required unless the product is the carrier one. */
export function countryFromFlag(country: string | undefined, product: ServiceType | undefined): CountryCode | undefined {
  if (country === undefined) {
    if (product && isCarrierProduct(product)) return undefined;
    throw new UsageError(`--country is required${product ? ` for ${product}` : ""}.`, {
      hint: "Give the ISO 3166-1 code of the numbers' country, e.g. --country GB.",
    });
  }
  return countryCode("--country", country);
}

/** A country flag's value as an ISO 3166-1 alpha-2 code (any case); anything else is a usage error naming the likely code. */
export function countryCode(flag: string, value: string): CountryCode {
  const code = value.trim().toUpperCase();
  if (isKnownCountry(code)) return code;
  throw new UsageError(`${flag} ${value} is not an ISO 3166-1 alpha-2 country code.${didYouMean(suggestCountry(value))}`, {
    hint: "Use a code such as GB, US or DE.",
  });
}

/** The file argument as a source: `-` is stdin, a relative path is taken from the working directory. */
function sourceFromArgument(ctx: Context, file: string): PrepareOptions["source"] {
  return file === "-" ? { stream: ctx.io.stdin, name: "stdin" } : absolutePath(ctx, file);
}

/**
 * Preparation of a list as the flags ask (loads libphonenumber-js: import this
 * module only in a run), telling the user (stderr) which column it read. On a
 * terminal a spinner line counts the rows read and the rate: a long list is
 * never a blank screen.
 */
export async function prepareFromFlags(
  ctx: Context,
  file: string,
  flags: PreparationFlags,
  country: CountryCode | undefined,
  output: Pick<PrepareOptions, "uploadPath" | "outputDir" | "maxTaskSize" | "anyRegion" | "countryTasks">,
): Promise<PrepareResult> {
  const { options, done } = await preparationOptions(ctx, file, flags, country);
  const result = await prepareList({ ...options, ...output }).finally(done);
  notePreparation(ctx, result);
  return result;
}

/**
 * What preparation needs from the flags, with progress on stderr while it reads (a
 * spinner line on a terminal: rows read and the rate); `done` stops the progress.
 */
export async function preparationOptions(
  ctx: Context,
  file: string,
  flags: PreparationFlags,
  country: CountryCode | undefined,
): Promise<{ options: PrepareOptions; done: () => void }> {
  const progress = await createProgress(ctx.printer, ctx.env);
  const started = ctx.now();
  const onProgress = (rows: number) => {
    const seconds = (ctx.now() - started) / 1000;
    const rate = seconds > 0 ? ` (${count(Math.round(rows / seconds))} rows/s)` : "";
    progress.update(`preparing the list: ${count(rows)} rows read${rate}`);
  };
  const options: PrepareOptions = {
    source: sourceFromArgument(ctx, file),
    ...(country ? { country } : {}),
    ...(flags.column === undefined ? {} : { column: flags.column }),
    requireCountryCode: Boolean(flags.requireCountryCode),
    strictRegion: Boolean(flags.strictRegion),
    ...(flags.digitsAs === undefined ? {} : { digitsAs: flags.digitsAs }),
    ...(flags.encoding === undefined ? {} : { encoding: flags.encoding }),
    ...(flags.sheet === undefined ? {} : { sheet: flags.sheet }),
    ...rejectsOutput(ctx, flags.rejects),
    ...(flags.force ? { force: true } : {}),
    ...(flags.safeCsv ? { safeCsv: true } : {}),
    ...(flags.threads === undefined ? {} : { workers: flags.threads }),
    ...(progress.live ? { onProgress } : {}),
    // --timeout bounds the whole command, reading the list included; Ctrl-C and SIGTERM stop it too.
    signal: ctx.signal,
  };
  return { options, done: () => progress.stop() };
}

/** What the user hears of a list just read: which column, and whether its ambiguous digits were read by a convention it barely follows. */
export function notePreparation(ctx: Context, result: PrepareResult): void {
  noteColumn(ctx, result);
  warnMixedConventions(ctx, result);
}

function rejectsOutput(ctx: Context, rejects: string | undefined): Pick<PrepareOptions, "rejectsPath" | "rejectsStream"> {
  if (rejects === undefined) return {};
  return rejects === "-" ? { rejectsStream: dataOut(ctx.io) } : { rejectsPath: absolutePath(ctx, rejects) };
}

/**
 * `--rejects -` writes the rejects CSV to stdout, which nothing else may then use:
 * `other` names what else of the command wants it (`-o -`, --json), if anything.
 */
export function checkRejectsToStdout(flags: PreparationFlags, other: string | undefined): void {
  if (flags.rejects === "-" && other !== undefined) {
    throw new UsageError(`--rejects - and ${other} both want stdout.`, { hint: "Write one of them to a file." });
  }
}

/** Minority conventions at or above this share of the votes make reading ambiguous rows by the majority a guess worth a warning. */
const MIXED_SHARE = 0.3;

/**
 * Warns when ambiguous rows were read by a convention the list itself does not clearly
 * follow: the minority holds a good share of the votes, or a handful of nationally written
 * cells decided more rows than they are (the calling-code reading, the default, needs no
 * warning when few votes chose it).
 */
function warnMixedConventions(ctx: Context, { summary }: PrepareResult): void {
  const { total, resolved_by, votes } = summary.ambiguous;
  const all = votes.international + votes.national;
  if (resolved_by !== "convention" || total === 0 || all === 0) return;
  const way = summary.ambiguous.national > 0 ? "read nationally" : "read with their country code";
  if (Math.min(votes.international, votes.national) / all >= MIXED_SHARE) {
    ctx.printer.warn(
      `the list mixes conventions: ${count(votes.international)} cells read with their country code, ${count(votes.national)} read nationally; ` +
        `${count(total)} ambiguous rows were ${way}. Pass --digits-as to decide.`,
    );
  } else if (summary.ambiguous.national > votes.national) {
    ctx.printer.warn(
      `${count(summary.ambiguous.national)} ambiguous rows were read nationally on the evidence of only ${count(votes.national)} ` +
        `nationally written cells. Pass --digits-as to decide.`,
    );
  }
}

/** Says which column of a CSV (or which sheet and column of a workbook) the numbers were read from, and why that one. */
export function noteColumn(ctx: Context, { column, format }: PrepareResult): void {
  if (format.kind === "txt") return;
  const name = column.name === undefined ? "" : ` "${terminalText(column.name, { singleLine: true })}"`;
  const sheet = format.sheet === undefined ? "" : ` of sheet "${format.sheet}"`;
  ctx.printer.note(`Reading phone numbers from column ${column.index + 1}${name}${sheet} (${describeChoice(column.chosenBy)}).`);
}

function describeChoice(chosenBy: PrepareResult["column"]["chosenBy"]): string {
  switch (chosenBy) {
    case "option":
      return "chosen by --column";
    case "record":
      return "the column the list was submitted with";
    case "header":
      return "chosen by its header name; use --column to pick another";
    case "content":
      return "chosen by its content; use --column to pick another";
    case "only-column":
      return "chosen by being the only column";
    case "first-column":
      return "chosen by default: first column of a file without header; use --column to pick another";
  }
}

/** No country code in at least this share of the lines: worth saying how to keep them. */
const NO_CODE_SHARE = 0.05;

/**
 * With no country to read nationally written numbers in (carrier_batch without --country,
 * or --country auto without --default-country), they are all `no_code`. When they are a
 * good share of the list, the hint names the flag that keeps them, and the country most
 * numbers written with a code belong to, when most do. Call it while the upload lists
 * still exist. Undefined when there is nothing to say.
 */
export async function noCodeHint(result: PrepareResult, anyRegion: boolean): Promise<string | undefined> {
  const { no_code_cnt, submitted_lines } = result.summary;
  if (result.settings.country !== undefined || no_code_cnt === 0 || no_code_cnt < NO_CODE_SHARE * submitted_lines) return undefined;
  const flag = anyRegion ? "--default-country" : "--country";
  const found = `${count(no_code_cnt)} of ${count(submitted_lines)} numbers have no country code, so they are excluded (no_code).`;
  const main = await mainCountryOf(result.chunks);
  if (main === undefined) return `${found} If they are of one country, ${flag} CC reads them as its numbers and keeps them.`;
  const { country, numbers, of } = main;
  const foreign = of - numbers;
  // Under --country auto every country is kept anyway; with one task country the others are then excluded.
  const then =
    anyRegion || foreign === 0
      ? ""
      : ` (the ${count(foreign)} of ${foreign === 1 ? "another country" : "other countries"} would then be excluded as other_country)`;
  return `${found} ${count(numbers)} of the ${count(of)} numbers written with a code are ${country}'s: ${flag} ${country} would read the ${count(no_code_cnt)} as ${country} numbers and keep them${then}.`;
}

/**
 * The preparation summary for humans: a compact block of at most ten aligned
 * lines, in the service's names. Rows read and kept always show; a class with
 * no rows is left out, so what needs a look stands out.
 */
export function printPreparationSummary(ctx: Context, result: PrepareResult): void {
  for (const line of preparationLines(result.summary)) ctx.printer.note(line);
}

function preparationLines(s: PrepareSummary): string[] {
  const rows: Array<[label: string, value: number | string, note?: string]> = [
    ["rows read", s.rows_read, notes(readNotes(s))],
    ["kept (to check)", s.kept, notes(keptNotes(s))],
  ];
  const optional: Array<[string, number]> = [
    ["invalid_cnt", s.invalid_cnt],
    ["no_code_cnt", s.no_code_cnt],
    ["other_country_cnt", s.other_country_cnt],
    ["duplicate_cnt", s.duplicate_cnt],
    ["below_min_task", s.below_min_task ?? 0],
    ["blank", s.blank],
    ["extensions_dropped", s.extensions_dropped],
    ["spreadsheet_expanded", s.spreadsheet_expanded],
  ];
  rows.push(...optional.filter(([, n]) => n > 0));
  const { ambiguous: a } = s;
  if (a.total > 0) {
    const votes = `votes ${count(a.votes.international)} international, ${count(a.votes.national)} national`;
    rows.push([
      "ambiguous",
      `${count(a.total)}: ${count(a.international)} international, ${count(a.national)} national (by ${a.resolved_by}; ${votes})`,
    ]);
  }
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const numbers = rows.map(([, value]) => (typeof value === "number" ? count(value) : value));
  const valueWidth = Math.max(...numbers.filter((_, i) => typeof rows[i]![1] === "number").map((text) => text.length));
  return rows.map(([label, value, note = ""], i) => {
    const text = typeof value === "number" ? numbers[i]!.padStart(valueWidth) : numbers[i]!;
    return `${label.padEnd(labelWidth)}  ${text}${note}`;
  });
}

/** What qualifies the rows read: how many were lines the service would count, and an encoding other than UTF-8. */
function readNotes(s: PrepareSummary): string[] {
  const found: string[] = [];
  if (s.blank > 0) found.push(`submitted_lines ${count(s.submitted_lines)}: not blank`);
  if (s.encoding !== "utf8" || s.encoding_source === "forced") found.push(`encoding ${s.encoding}, ${s.encoding_source}`);
  return found;
}

/** What qualifies the kept rows: those written nationally, and regions that only share the calling code. */
function keptNotes(s: PrepareSummary): string[] {
  const found: string[] = [];
  if (s.national_normalised > 0) found.push(`national_normalised ${count(s.national_normalised)}`);
  const regions = Object.entries(s.shared_code_regions).map(([region, n]) => `${region} ${count(n)}`);
  if (regions.length > 0) found.push(`shared_code_regions ${regions.join(", ")}`);
  return found;
}

function notes(found: readonly string[]): string {
  return found.length === 0 ? "" : `  (${found.join("; ")})`;
}
