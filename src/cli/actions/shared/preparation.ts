import type { CountryCode } from "libphonenumber-js/max";
import type { ForcedEncoding } from "../../../csv/encodings.js";
import { UsageError } from "../../../errors.js";
import { isKnownCountry, prepareList, type DigitsReading, type PrepareOptions, type PrepareResult } from "../../../prepare/index.js";
import { closestMatch, didYouMean } from "../../../did-you-mean.js";
import { suggestCountry } from "../../../prepare/country-names.js";
import { count } from "../../../format-count.js";
import { canonicalServiceType, isCarrierProduct, SERVICE_TYPE_ALIASES, SERVICE_TYPES, type ServiceType } from "../../../spec/products.js";
import type { Context } from "../../context.js";
import { dataOut } from "../../io.js";
import { absolutePath } from "../../paths.js";
import { createProgress } from "../../progress.js";
import { notePreparation } from "../../views/preparation-view.js";

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
