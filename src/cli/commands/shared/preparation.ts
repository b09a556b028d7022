import type { CountryCode } from "libphonenumber-js/max";
import { UsageError } from "../../../errors.js";
import { isKnownCountry, prepareList, type PrepareOptions, type PrepareResult } from "../../../prepare/index.js";
import type { PrepareSummary } from "../../../prepare/summary.js";
import { count } from "../../../results/summary.js";
import { canonicalServiceType, isCarrierProduct, SERVICE_TYPES, type ServiceType } from "../../../spec/products.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { createProgress } from "../../progress.js";

export interface PreparationFlags {
  country?: string;
  column?: string;
  requireCountryCode?: boolean;
  strictRegion?: boolean;
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
 * module only in a run), telling the user (stderr) which column it read. On a
 * terminal a spinner line counts the rows read and the rate: a long list is
 * never a blank screen.
 */
export async function prepareFromFlags(
  ctx: Context,
  file: string,
  flags: PreparationFlags,
  country: CountryCode | undefined,
  output: Pick<PrepareOptions, "uploadPath" | "outputDir" | "maxTaskSize">,
): Promise<PrepareResult> {
  const progress = await createProgress(ctx.printer, ctx.env);
  const started = ctx.now();
  const onProgress = (rows: number) => {
    const seconds = (ctx.now() - started) / 1000;
    const rate = seconds > 0 ? ` (${count(Math.round(rows / seconds))} rows/s)` : "";
    progress.update(`preparing the list: ${count(rows)} rows read${rate}`);
  };
  const result = await prepareList({
    source: sourceFromArgument(ctx, file),
    ...(country ? { country } : {}),
    ...(flags.column === undefined ? {} : { column: flags.column }),
    requireCountryCode: Boolean(flags.requireCountryCode),
    strictRegion: Boolean(flags.strictRegion),
    ...(flags.rejects === undefined ? {} : { rejectsPath: absolutePath(ctx, flags.rejects) }),
    ...(flags.threads === undefined ? {} : { workers: flags.threads }),
    ...(progress.live ? { onProgress } : {}),
    ...output,
  }).finally(() => progress.stop());
  noteColumn(ctx, result);
  return result;
}

/** Says which column of a CSV the numbers were read from, and why that one. */
export function noteColumn(ctx: Context, { column, format }: PrepareResult): void {
  if (format.kind !== "csv") return;
  const name = column.name === undefined ? "" : ` "${column.name}"`;
  ctx.printer.note(`Reading phone numbers from column ${column.index + 1}${name} (chosen by ${describeChoice(column.chosenBy)}).`);
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

/**
 * The preparation summary for humans: a compact block of at most ten aligned
 * lines, in the service's names. Rows read and kept always show; a class with
 * no rows is left out, so what needs a look stands out.
 */
export function printPreparationSummary(ctx: Context, result: PrepareResult): void {
  for (const line of preparationLines(result.summary)) ctx.printer.note(line);
}

export function preparationLines(s: PrepareSummary): string[] {
  const regions = Object.entries(s.shared_code_regions)
    .map(([region, n]) => `${region} ${count(n)}`)
    .join(", ");
  const blankNote = s.blank > 0 ? `  (submitted_lines ${count(s.submitted_lines)}: not blank)` : "";
  const rows: Array<[label: string, value: number | string, note?: string]> = [
    ["rows read", s.rows_read, blankNote],
    ["kept (to check)", s.kept],
  ];
  const optional: Array<[string, number]> = [
    ["invalid_cnt", s.invalid_cnt],
    ["no_code_cnt", s.no_code_cnt],
    ["other_country_cnt", s.other_country_cnt],
    ["duplicate_cnt", s.duplicate_cnt],
    ["blank", s.blank],
    ["national_normalised", s.national_normalised],
    ["extensions_dropped", s.extensions_dropped],
  ];
  rows.push(...optional.filter(([, n]) => n > 0));
  if (regions) rows.push(["shared_code_regions", regions]);
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const numbers = rows.map(([, value]) => (typeof value === "number" ? count(value) : value));
  const valueWidth = Math.max(...numbers.filter((_, i) => typeof rows[i]![1] === "number").map((text) => text.length));
  return rows.map(([label, value, note = ""], i) => {
    const text = typeof value === "number" ? numbers[i]!.padStart(valueWidth) : numbers[i]!;
    return `${label.padEnd(labelWidth)}  ${text}${note}`;
  });
}
