import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { UsageError } from "../../errors.js";
import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import { absolutePath } from "../paths.js";
import { withTempDir } from "../temp-dir.js";
import { checkOutputs } from "./shared/destination.js";
import { digitsAsOption, encodingOption, examples, safeCsvOption, sheetOption, threadsOption } from "./shared/help.js";
import type { PreparationFlags } from "./shared/preparation.js";
import { count } from "../../format-count.js";

export interface ValidateOptions extends PreparationFlags {
  type?: string;
  output?: string;
}

/** `bulkcheck validate <file>`. Tests pass their own `run` to see what the flags parse into. */
export function validateCommand(invoke: Invoke, run = validateRun) {
  return new Command("validate")
    .description("prepare a list locally (no network, no key): summary, upload list, rejects")
    .argument("<file>", "list to check (.txt, .csv, .tsv, .xlsx), or - for stdin")
    .option("--country <CC>", "ISO 3166-1 country of the numbers, or auto to keep valid numbers of every country")
    .option("--default-country <CC>", "with --country auto: the country of numbers written without their country code")
    .option("--type <service_type>", "product (carrier_batch allows no --country)")
    .option("--column <name|index>", "phone column of a CSV or workbook (name, or 1-based index)")
    .option("--require-country-code", "exclude numbers written without their country code")
    .option("--strict-region", "exclude regions that only share the calling code")
    .option("-o, --output <file>", "write the normalised upload list here (- for stdout)")
    .option("--rejects <file>", "write every excluded row to this CSV (- for stdout)")
    .addOption(safeCsvOption())
    .addOption(sheetOption())
    .addOption(digitsAsOption())
    .addOption(encodingOption())
    .addOption(threadsOption())
    .option("--force", "overwrite output files")
    .addHelpText(
      "after",
      examples([
        "bulkcheck validate crm.csv --country GB -o upload.txt --rejects rejects.csv",
        "bulkcheck validate list.txt --country GB --json",
        "bulkcheck validate crm.xlsx --country GB --sheet Contacts --rejects rejects.csv",
      ]),
    )
    .action((file, options, cmd) => invoke(cmd, (ctx) => run(ctx, file, options)));
}

/** Local only: no key, no network. Summary on stderr (or JSON on stdout), upload list to -o, rejects to --rejects. */
export async function validateRun(ctx: Context, file: string, options: ValidateOptions): Promise<void> {
  // Preparation loads libphonenumber-js: when the run starts, not with the command tree.
  const { checkRejectsToStdout, noCodeHint, prepareFromFlags, printPreparationSummary, productFromFlag } =
    await import("./shared/preparation.js");
  const { countryChoice } = await import("./shared/country-choice.js");
  const product = options.type === undefined ? undefined : productFromFlag(options.type);
  const { country, anyRegion } = countryChoice(options, product);
  const listToStdout = options.output === "-";
  if (listToStdout && ctx.globals.json) throw new UsageError("-o - and --json both want stdout; write the list to a file, or drop --json.");
  checkRejectsToStdout(options, listToStdout ? "-o -" : ctx.globals.json ? "--json" : undefined);
  const rejectsToStdout = options.rejects === "-";
  await checkOutputs(ctx, { "-o": options.output, "--rejects": options.rejects }, { force: options.force, reading: [file] });
  const outcome = await withTempDir(async (dir) => {
    const output = {
      ...(options.output === undefined || listToStdout ? { outputDir: dir } : { uploadPath: absolutePath(ctx, options.output) }),
      ...(anyRegion ? { anyRegion } : {}),
    };
    const prepared = await prepareFromFlags(ctx, file, options, country, output);
    if (listToStdout) {
      for (const chunk of prepared.chunks) {
        await pipeline(createReadStream(chunk.path), ctx.io.stdout, { end: false, signal: ctx.signal });
      }
    }
    // While the upload list still exists: the hint reads it.
    return { prepared, hint: await noCodeHint(prepared, anyRegion) };
  });
  const { prepared: result, hint } = outcome;
  if (ctx.globals.json) {
    ctx.printer.json(snakeCaseKeys({ ...result.summary, column: result.column, format: result.format }));
    if (hint) ctx.printer.note(hint);
    return;
  }
  printPreparationSummary(ctx, result);
  if (hint) ctx.printer.note(hint);
  if (options.output && !listToStdout)
    ctx.printer.note(`Upload list (${count(result.summary.kept)} numbers) written to ${options.output}.`);
  if (options.rejects && !rejectsToStdout) ctx.printer.note(`Excluded rows written to ${options.rejects}.`);
}
