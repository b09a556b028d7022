import type { CountryCode } from "libphonenumber-js/max";
import type { ForcedEncoding } from "../../../csv/encodings.js";
import { UsageError } from "../../../errors.js";
import { isKnownCountry, prepareList, type DigitsReading, type PrepareOptions, type PrepareResult } from "../../../prepare/index.js";
import { boxedTable } from "../../../results/format-table.js";
import { canonicalServiceType, isCarrierProduct, SERVICE_TYPES, type ServiceType } from "../../../spec/products.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";

export interface PreparationFlags {
  country?: string;
  column?: string;
  requireCountryCode?: boolean;
  strictRegion?: boolean;
  digitsAs?: DigitsReading;
  encoding?: ForcedEncoding;
  /** The sheet of an Excel workbook: a name, or a number from 1. */
  sheet?: string;
  /** A path, or `-` for stdout. */
  rejects?: string;
  /** Worker threads for classification (default 0: in this thread). */
  threads?: number;
}

/** --type as the service's canonical product code; unknown → usage error (exit 2) listing the products. */
export function productFromFlag(type: string): ServiceType {
  const product = canonicalServiceType(type.trim());
  if (!product) throw new UsageError(`Unknown --type "${type}".`, { hint: `Products: ${SERVICE_TYPES.join(", ")}` });
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
  const code = country.trim().toUpperCase();
  if (!isKnownCountry(code)) {
    throw new UsageError(`--country ${country} is not an ISO 3166-1 alpha-2 country code.`, { hint: "Use a code such as GB, US or DE." });
  }
  return code;
}

/** The file argument as a source: `-` is stdin, a relative path is taken from the working directory. */
function sourceFromArgument(ctx: Context, file: string): PrepareOptions["source"] {
  return file === "-" ? { stream: ctx.io.stdin, name: "stdin" } : absolutePath(ctx, file);
}

/**
 * Preparation of a list as the flags ask (loads libphonenumber-js: import this
 * module only in a run), telling the user (stderr) which column it read.
 */
export async function prepareFromFlags(
  ctx: Context,
  file: string,
  flags: PreparationFlags,
  country: CountryCode | undefined,
  output: Pick<PrepareOptions, "uploadPath" | "outputDir" | "maxTaskSize">,
): Promise<PrepareResult> {
  const result = await prepareList({
    source: sourceFromArgument(ctx, file),
    ...(country ? { country } : {}),
    ...(flags.column === undefined ? {} : { column: flags.column }),
    requireCountryCode: Boolean(flags.requireCountryCode),
    strictRegion: Boolean(flags.strictRegion),
    ...(flags.digitsAs === undefined ? {} : { digitsAs: flags.digitsAs }),
    ...(flags.encoding === undefined ? {} : { encoding: flags.encoding }),
    ...(flags.sheet === undefined ? {} : { sheet: flags.sheet }),
    ...rejectsOutput(ctx, flags.rejects),
    ...(flags.threads === undefined ? {} : { workers: flags.threads }),
    ...output,
  });
  noteColumn(ctx, result);
  warnMixedConventions(ctx, result);
  return result;
}

function rejectsOutput(ctx: Context, rejects: string | undefined): Pick<PrepareOptions, "rejectsPath" | "rejectsStream"> {
  if (rejects === undefined) return {};
  return rejects === "-" ? { rejectsStream: ctx.io.stdout } : { rejectsPath: absolutePath(ctx, rejects) };
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
      `the list mixes conventions: ${votes.international} cells read with their country code, ${votes.national} read nationally; ` +
        `${total} ambiguous rows were ${way}. Pass --digits-as to decide.`,
    );
  } else if (summary.ambiguous.national > votes.national) {
    ctx.printer.warn(
      `${summary.ambiguous.national} ambiguous rows were read nationally on the evidence of only ${votes.national} ` +
        `nationally written cells. Pass --digits-as to decide.`,
    );
  }
}

/** Says which column of a CSV (or which sheet and column of a workbook) the numbers were read from, and why that one. */
export function noteColumn(ctx: Context, { column, format }: PrepareResult): void {
  if (format.kind === "txt") return;
  const name = column.name === undefined ? "" : ` "${column.name}"`;
  const sheet = format.sheet === undefined ? "" : ` of sheet "${format.sheet}"`;
  ctx.printer.note(`Reading phone numbers from column ${column.index + 1}${name}${sheet} (chosen by ${describeChoice(column.chosenBy)}).`);
}

function describeChoice(chosenBy: PrepareResult["column"]["chosenBy"]): string {
  switch (chosenBy) {
    case "option":
      return "--column";
    case "header":
      return "its header name; use --column to pick another";
    case "content":
      return "its content; use --column to pick another";
    case "only-column":
      return "being the only column";
    case "first-column":
      return "default: first column of a file without header; use --column to pick another";
  }
}

/** The preparation summary for humans: a table on a terminal, aligned lines otherwise. */
export function printPreparationSummary(ctx: Context, result: PrepareResult): void {
  const s = result.summary;
  const regions = Object.entries(s.shared_code_regions)
    .map(([region, count]) => `${region} ${count}`)
    .join(", ");
  const rows: Array<[string, number | string]> = [
    ["rows read", s.rows_read],
    ["submitted_lines (non-blank)", s.submitted_lines],
    ["kept (to check)", s.kept],
    ["invalid_cnt", s.invalid_cnt],
    ["no_code_cnt", s.no_code_cnt],
    ["other_country_cnt", s.other_country_cnt],
    ["duplicate_cnt", s.duplicate_cnt],
    ["blank", s.blank],
    ["national_normalised", s.national_normalised],
    ["shared_code_regions", regions || "0"],
  ];
  if (s.extensions_dropped > 0) rows.push(["extensions_dropped", s.extensions_dropped]);
  if (s.spreadsheet_expanded > 0) rows.push(["spreadsheet_expanded", s.spreadsheet_expanded]);
  const { ambiguous: a } = s;
  if (a.total > 0) {
    const votes = `votes ${a.votes.international} international, ${a.votes.national} national`;
    rows.push(["ambiguous", `${a.total}: ${a.international} international, ${a.national} national (by ${a.resolved_by}; ${votes})`]);
  }
  if (s.encoding !== "utf8" || s.encoding_source === "forced") rows.push(["encoding", `${s.encoding} (${s.encoding_source})`]);
  const text = rows.map(([label, value]) => [label, String(value)] as const);
  if (ctx.io.stderr.isTTY) {
    ctx.printer.note(boxedTable(["list", "rows"], text, ctx.printer.options.colour));
  } else {
    const width = Math.max(...text.map(([label]) => label.length));
    for (const [label, value] of text) ctx.printer.note(`${label.padEnd(width)}  ${value}`);
  }
}
