import { UsageError } from "../../errors.js";
import { usdToMicros } from "../../tasks/cost.js";
import { Command } from "../commander.js";
import { commandLine } from "../command-line.js";
import type { Context, Invoke } from "../context.js";
import { absolutePath } from "../paths.js";
import { withTempDir } from "../temp-dir.js";
import { checkOutputFlags, type AfterUploadFlags } from "./shared/after-upload.js";
import { checkOutputs } from "./shared/destination.js";
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
import { parseAge } from "../parse-flags.js";

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
    .option("--idempotency-key <key>", "use this key (numbered when split) instead of the ones derived from the run")
    .option("--resubmit", "no longer needed: a finished run's list is checked again by the next run (accepted and ignored)")
    .option(
      "--max-age <age>",
      "reuse ledger results younger than this instead of checking again: 0, 90s, 12h, 7d (default: config max-age, 12h)",
      parseAge,
    )
    .option("--no-ledger", "keep no result of this run in the ledger, and reuse none")
    .option("--dry-run", "prepare and show the plan and cost; upload nothing");
  return addReserveAndWaitOptions(command)
    .option("--join", "with --wait -o: write the source rows with the result columns beside them")
    .option("--report <file.html>", "with --wait: also write an HTML report of the run (self-contained, printable)")
    .option(
      "--changes <file>",
      "with --wait: write the numbers whose result changed since their previous check (CSV, or .xlsx; - for stdout)",
    )
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
 * One run of a list (see src/run/submit-run.ts): prepared, then its unfinished run
 * carried on or a new one planned (reusing fresh ledger results), the money checked,
 * the parts uploaded (≤ the request slots at once, waiting for room when the service's
 * quota of unfinished tasks is full) and the task ids printed; with --wait, every task
 * waited for as the uploads go on, and with -o each result fetched (and recorded in the
 * ledger) as its task finishes, then the merged output (or join) written, with the
 * changes since the previous check and the report when asked. The run ends when its
 * output is written (without -o, when its tasks are submitted or finished as asked).
 */
export async function submitRun(ctx: Context, file: string, options: SubmitOptions): Promise<void> {
  // Loaded when the run starts, not with the command tree: preparation loads libphonenumber-js.
  const { checkRejectsToStdout, noCodeHint, notePreparation, preparationOptions, printPreparationSummary, productFromFlag } =
    await import("./shared/preparation.js");
  const { countryChoice } = await import("./shared/country-choice.js");
  const { RESUBMIT_NOTE, runDeps, runPrinter } = await import("./shared/submission.js");
  const { assertKeyLength } = await import("../../tasks/idempotency.js");
  const { submitRun: runList, finishRun } = await import("../../run/submit-run.js");
  const { runOutput } = await import("./shared/run-output.js");
  const product = productFromFlag(options.type);
  const { country, anyRegion } = countryChoice(options, product);
  if (options.idempotencyKey !== undefined) assertKeyLength(options.idempotencyKey);
  if (options.resubmit) ctx.printer.note(RESUBMIT_NOTE);
  await checkFlags(ctx, file, options);
  checkRejectsToStdout(options, options.output === "-" ? "-o -" : ctx.globals.json ? "--json" : undefined);
  // A refused --interval must stop the run before anything is reserved, not after the upload.
  const pollIntervalMs = await pollInterval(ctx, options.interval);
  const ledger = await ctx.ledgerSettings();
  const ledgerOn = ledger.on && options.ledger !== false;
  const sourcePath = file === "-" ? undefined : absolutePath(ctx, file);
  const store = await ctx.store();
  const subject = { product, country: anyRegion ? "auto" : country };
  const timeoutMs = ctx.deadline.remainingMs();
  await withTempDir(async (dir) => {
    const { options: prepare, done } = await preparationOptions(ctx, file, options, country);
    const printer = runPrinter(ctx, options, subject, pollIntervalMs, async (result) => {
      done();
      notePreparation(ctx, result);
      if (!ctx.globals.json) printPreparationSummary(ctx, result);
      const hint = await noCodeHint(result, anyRegion);
      if (hint) ctx.printer.note(hint);
    });
    const output = runOutput(ctx, { ...options, ledger: ledgerOn, retentionSeconds: ledger.retentionSeconds, sourcePath, product });
    const outcome = await runList(
      {
        command: {
          sourcePath,
          product,
          country: anyRegion ? "auto" : country,
          defaultCountry: anyRegion ? country : undefined,
          column: options.column,
          sheet: options.sheet,
          requireCountryCode: options.requireCountryCode,
          strictRegion: options.strictRegion,
          digitsAs: options.digitsAs,
          encoding: options.encoding,
        },
        product,
        country: anyRegion ? undefined : country,
        prepare: { ...prepare, ...(anyRegion ? { anyRegion } : {}) },
        ...(options.idempotencyKey === undefined ? {} : { userKey: options.idempotencyKey }),
        dryRun: Boolean(options.dryRun),
        ...(options.maxCost === undefined ? {} : { maxCostMicros: usdToMicros(options.maxCost) }),
        maxAgeMs: (options.maxAge ?? ledger.maxAgeSeconds) * 1000,
        ledger: ledgerOn,
        wait: Boolean(options.wait),
        pollIntervalMs,
        ...(timeoutMs === undefined ? {} : { timeoutMs, timeoutSeconds: ctx.deadline.seconds }),
        resumeCommand: resumeCommand(ctx.argv),
        ifBusy: options.ifBusy ?? "wait",
      },
      {
        ...(await runDeps(ctx, { product, workDir: dir, yes: options.yes, printer })),
        ...(output.fetchesResults ? { onSucceeded: output.stage } : {}),
      },
    ).finally(async () => {
      await printer.ready();
      printer.stop();
    });
    if (!outcome) {
      if (options.dryRun) ctx.printer.note("Dry run: nothing was uploaded.");
      return;
    }
    await output.write(outcome);
    await finishRun(store, outcome, ctx.now, output.describe());
    await output.cleanUp();
  });
}

/** The command to carry on a run: the same command, without what no longer does anything (--resubmit). */
function resumeCommand(argv: readonly string[]): string {
  return commandLine(argv.filter((arg) => arg !== "--resubmit"));
}

async function checkFlags(ctx: Context, file: string, options: SubmitOptions): Promise<void> {
  if (options.join && (file === "-" || options.output === undefined)) {
    throw new UsageError("--join needs a source file (not stdin) and -o FILE.");
  }
  if (options.changes !== undefined && !options.wait) {
    throw new UsageError("--changes needs --wait (results do not exist until the tasks have finished).", {
      hint: "Add --wait.",
    });
  }
  if (options.changes !== undefined && options.ledger === false) {
    throw new UsageError("--changes compares each result with the ledger's previous one, and --no-ledger keeps none.", {
      hint: "Drop --no-ledger (and check that config set ledger is not off).",
    });
  }
  if (options.changes === "-" && (options.output === "-" || options.rejects === "-" || ctx.globals.json)) {
    throw new UsageError("--changes - wants stdout, and so does -o -, --rejects - or --json.", { hint: "Write one of them to a file." });
  }
  await checkOutputFlags(ctx, options, file);
  await checkOutputs(ctx, { "--changes": options.changes }, { force: options.force, reading: [file] });
}
