import { TaskFailedError, UsageError } from "../../errors.js";
import type { Task } from "../../spec/task.js";
import type { Staging } from "../../tasks/staging.js";
import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { absolutePath } from "../paths.js";
import { withTempDir } from "../temp-dir.js";
import { afterUpload, checkOutputFlags, type AfterUploadFlags } from "./shared/after-upload.js";
import {
  addReserveAndWaitOptions,
  digitsAsOption,
  encodingOption,
  examples,
  safeCsvOption,
  sheetOption,
  threadsOption,
} from "./shared/help.js";
import type { PreparationFlags } from "./shared/preparation.js";
import type { SubmitFlags } from "./shared/submission.js";
import { pollInterval } from "./shared/waiting.js";

export interface SubmitOptions extends PreparationFlags, SubmitFlags, AfterUploadFlags {
  type: string;
}

/** `bulkcheck submit <file>`. Tests pass their own `run` to see what the flags parse into. */
export function submitCommand(invoke: Invoke, run = submitRun) {
  const command = new Command("submit")
    .description("prepare a list locally and submit it as one or more tasks")
    .argument("<file>", "list to check (.txt, .csv, .tsv, .xlsx), or - for stdin")
    .requiredOption(
      "--type <service_type>",
      "product: number_validation_batch, number_activity_batch, number_high_value_batch, number_ecommerce_batch, carrier_batch",
    )
    .option(
      "--country <CC>",
      "ISO 3166-1 country of the numbers (optional only for carrier_batch), or auto: one task per country of a mixed list",
    )
    .option("--default-country <CC>", "with --country auto: the country of numbers written without their country code")
    .option("--column <name|index>", "phone column of a CSV or workbook (name, or 1-based index)")
    .option("--require-country-code", "exclude numbers written without their country code, as the service does")
    .option("--strict-region", "exclude regions that only share the calling code (e.g. GG/JE/IM for GB)")
    .option("--rejects <file>", "write every excluded row to this CSV (- for stdout; task ids then go to stderr)")
    .addOption(safeCsvOption())
    .addOption(sheetOption())
    .addOption(digitsAsOption())
    .addOption(encodingOption())
    .addOption(threadsOption())
    .option("--idempotency-key <key>", "use this key instead of the one derived from the list")
    .option("--resubmit", "force a new task for a list already submitted")
    .option("--dry-run", "prepare and show the plan and cost; upload nothing");
  return addReserveAndWaitOptions(command)
    .option("--join", "with --wait -o: write the source rows with the result columns beside them")
    .option("--report <file.html>", "with --wait: also write an HTML report of the run (self-contained, printable)")
    .addHelpText(
      "after",
      examples([
        "bulkcheck submit list.csv --type carrier_batch --country GB",
        "ID=$(bulkcheck submit list.txt --type number_validation_batch --country GB --yes)",
        "bulkcheck submit crm.csv --type number_activity_batch --country GB --wait --join -o checked.csv",
        "bulkcheck submit crm.xlsx --type number_activity_batch --country auto --default-country GB --dry-run",
      ]),
    )
    .action((file, options, cmd) => invoke(cmd, (ctx) => run(ctx, file, options)));
}

/**
 * Prepare → check sizes and cost → journal the keys → schedule the uploads (≤ the
 * request slots at once, waiting for room when the service's quota of unfinished
 * tasks is full) → print task ids; with --wait, wait for every task as the uploads go
 * on, and with -o, fetch each result as its task finishes, then write the merged
 * output (or join) at the end.
 */
export async function submitRun(ctx: Context, file: string, options: SubmitOptions): Promise<void> {
  // Loaded when the run starts, not with the command tree: preparation loads
  // libphonenumber-js, and submitting derives keys (node:crypto).
  const { checkRejectsToStdout, noCodeHint, prepareFromFlags, printPreparationSummary, productFromFlag } =
    await import("./shared/preparation.js");
  const { countryChoice } = await import("./shared/country-choice.js");
  const { submitAndReport } = await import("./shared/submission.js");
  const { assertKeyLength } = await import("../../tasks/idempotency.js");
  const product = productFromFlag(options.type);
  const { country, anyRegion } = countryChoice(options, product);
  if (options.idempotencyKey !== undefined) assertKeyLength(options.idempotencyKey);
  await checkFlags(ctx, file, options);
  checkRejectsToStdout(options, options.output === "-" ? "-o -" : ctx.globals.json ? "--json" : undefined);
  // A refused --interval must stop the run before anything is reserved, not after the upload.
  if (options.wait) await pollInterval(ctx, options.interval);
  const limits = await ctx.limits();
  const { readSourceFile } = await import("../../tasks/source-check.js");
  const sourcePath = file === "-" ? undefined : absolutePath(ctx, file);
  const staged: { area?: Staging } = {};
  const uploaded = await withTempDir(async (dir) => {
    const { value: prepared, source } = await readSourceFile(sourcePath, () =>
      prepareFromFlags(ctx, file, options, country, {
        outputDir: dir,
        ...(anyRegion
          ? { anyRegion, countryTasks: { minTaskSize: limits.minTaskSize, maxTaskSize: limits.maxTaskSize } }
          : { maxTaskSize: limits.maxTaskSize }),
      }),
    );
    if (!ctx.globals.json) printPreparationSummary(ctx, prepared);
    const hint = await noCodeHint(prepared, anyRegion);
    if (hint) ctx.printer.note(hint);
    return submitAndReport(
      ctx,
      {
        product,
        country: anyRegion ? undefined : country,
        chunks: prepared.chunks,
        entry: { source, preparation: prepared.settings, prepared: prepared.summary },
      },
      options,
      {
        wait: options.wait,
        interval: options.interval,
        ...(options.wait && options.output !== undefined ? { staged: (area: Staging) => (staged.area = area) } : {}),
      },
    );
  }).catch(async (error: unknown) => {
    // A failed task means this list's output can never be merged under these keys.
    if (error instanceof TaskFailedError) await staged.area?.remove();
    throw error;
  });
  if (!uploaded) return;
  const { area } = staged;
  // With --wait the schedule has waited for every task already, and with -o fetched each result.
  const scheduled = area ? { staged: { tasks: uploaded.map((result) => result.task), read: (task: Task) => area.read(task) } } : {};
  await afterUpload(
    ctx,
    uploaded.map((result) => result.task.id),
    options,
    sourcePath,
    scheduled,
  );
  await area?.remove();
}

async function checkFlags(ctx: Context, file: string, options: SubmitOptions): Promise<void> {
  if (options.join && (file === "-" || options.output === undefined)) {
    throw new UsageError("--join needs a source file (not stdin) and -o FILE.");
  }
  await checkOutputFlags(ctx, options, file);
}
