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
function isXlsxPath(output: string | undefined): boolean {
  return output !== undefined && output.toLowerCase().endsWith(".xlsx");
}

/**
 * The format to write: --format when given, else xlsx for `-o *.xlsx`, else csv (jsonl
 * for --json on stdout). A table is boxed only on a terminal, and TSV anywhere else (see
 * RenderOptions.terminal), its cells neutralised either way. Called before any request, so
 * a refusal costs nothing.
 * @throws UsageError for xlsx on a terminal, which cannot show a workbook.
 */
export function resultFormat(ctx: Pick<Context, "io" | "globals">, flags: FormatFlags): OutputFormat {
  const toStdout = isStdout(flags.output);
  const format = flags.format ?? (isXlsxPath(flags.output) ? "xlsx" : undefined);
  if (format === "xlsx" && toStdout && ctx.io.stdout.isTTY) {
    throw new UsageError("--format xlsx writes an Excel workbook, which a terminal cannot show.", {
      hint: "Write it to a file with -o results.xlsx, or redirect stdout: > results.xlsx",
    });
  }
  const chosen = format ?? (ctx.globals.json && toStdout ? "jsonl" : "csv");
  refuseQueryOf(ctx, flags, chosen);
  return chosen;
}

/**
 * --query selects from JSON: from each row of results written to stdout as JSON lines, else
 * from the summary, which is printed only when the results go to a file.
 * @throws UsageError when the results take stdout in another format, where it would select nothing.
 */
function refuseQueryOf(ctx: Pick<Context, "globals">, flags: FormatFlags, format: string): void {
  if (ctx.globals.query === undefined || !isStdout(flags.output) || format === "jsonl") return;
  throw new UsageError(`--query selects from JSON, and the results on stdout would be ${format}.`, {
    hint: "Drop --format to get the rows as JSON lines, each of which --query selects from; or write the results to a file with -o, and --query selects from the summary.",
  });
}

/**
 * The format of a join (--join): an Excel workbook for --format xlsx or `-o *.xlsx`, else
 * CSV, the source's own text format. Called before any request.
 * @throws UsageError for any other --format, and for xlsx on a terminal.
 */
export function joinFormat(ctx: Pick<Context, "io" | "globals">, flags: FormatFlags): "csv" | "xlsx" {
  const format = flags.format ?? (isXlsxPath(flags.output) ? "xlsx" : "csv");
  if (format === "xlsx") {
    resultFormat(ctx, { ...flags, format });
    return format;
  }
  if (format !== "csv") {
    throw new UsageError("--join writes the source file's own format; drop --format.", {
      hint: "Or write the joined rows as an Excel workbook: --format xlsx, or -o FILE.xlsx.",
    });
  }
  refuseQueryOf(ctx, flags, "a joined CSV");
  return format;
}
