import { UsageError } from "../../../errors.js";
import type { OutputFormat } from "../../../results/index.js";
import type { Context } from "../../context.js";
import { isStdout } from "./destination.js";

/** What decides the format of results written by download, submit --wait -o and retry-failed --wait -o. */
export interface FormatFlags {
  format?: OutputFormat;
  output?: string;
}

/** An output path that names an Excel workbook: `.xlsx` in any case. */
export function isXlsxPath(output: string | undefined): boolean {
  return output !== undefined && output.toLowerCase().endsWith(".xlsx");
}

/**
 * The format to write: --format when given, else xlsx for `-o *.xlsx`, else csv (jsonl
 * for --json on stdout); a boxed table only on a terminal, TSV anywhere else. Called
 * before any request, so a refusal costs nothing.
 * @throws UsageError for xlsx on a terminal, which cannot show a workbook.
 */
export function resultFormat(ctx: Pick<Context, "io" | "globals">, flags: FormatFlags): OutputFormat {
  const toStdout = isStdout(flags.output);
  const format = flags.format ?? (isXlsxPath(flags.output) ? "xlsx" : undefined);
  if (format === "table") return toStdout && ctx.io.stdout.isTTY ? "table" : "tsv";
  if (format === "xlsx" && toStdout && ctx.io.stdout.isTTY) {
    throw new UsageError("--format xlsx writes an Excel workbook, which a terminal cannot show.", {
      hint: "Write it to a file with -o results.xlsx, or redirect stdout: > results.xlsx",
    });
  }
  return format ?? (ctx.globals.json && toStdout ? "jsonl" : "csv");
}

/**
 * The one place that refuses Excel output of a join (--join with --format xlsx or
 * -o *.xlsx), until the join can write a workbook.
 */
export function refuseXlsxJoin(flags: FormatFlags): void {
  if (flags.format === "xlsx" || (flags.format === undefined && isXlsxPath(flags.output))) {
    throw new UsageError("--join cannot write an Excel workbook yet.", {
      hint: "Write the join as CSV (-o checked.csv), or download the results alone as Excel: bulkcheck download ID -o results.xlsx",
    });
  }
}
