import { BulkcheckError, UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { absolutePath } from "../paths.js";
import { withTempDir } from "../../temp-dir.js";
import { checkOutputFlags, outputsRequest, tasksGoOn, type AfterUploadFlags } from "./shared/after-upload.js";
import { checkOutputs, isStdout } from "./shared/destination.js";
import type { PreparationFlags } from "./shared/preparation.js";
import type { SubmitFlags } from "./shared/submission.js";
import { pollInterval } from "./shared/waiting.js";
import {
  checkRejectsToStdout,
  noCodeHint,
  notePreparation,
  preparationOptions,
  printPreparationSummary,
  productFromFlag,
} from "./shared/preparation.js";
import { countryChoice } from "./shared/country-choice.js";
import { RESUBMIT_NOTE, runDeps, runFlagsRequest, runPrinter } from "./shared/submission.js";
import { assertKeyLength } from "../../tasks/idempotency.js";
import { submitRun } from "../../run/submit-run.js";
import { runJson, takesStdout } from "./shared/submission.js";
import { runOutputsView } from "./shared/run-outputs-view.js";
import type { OutputsRequest } from "../../outputs/outputs-request.js";
import { dataOut } from "../io.js";
import { changeCounts } from "../../notify/summary.js";

export interface SubmitOptions extends PreparationFlags, SubmitFlags, AfterUploadFlags {
  type: string;
  /** --changes-appeared-left, --changes-summary, --exit-on-change: see OutputsRequest and ChangesView. */
  changesAppearedLeft?: boolean;
  changesSummary?: boolean;
  exitOnChange?: boolean;
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
export async function submitAction(ctx: Context, file: string, options: SubmitOptions): Promise<void> {
  const product = productFromFlag(options.type);
  const { country, anyRegion } = countryChoice(options, product);
  if (options.idempotencyKey !== undefined) assertKeyLength(options.idempotencyKey);
  if (options.resubmit) ctx.printer.note(RESUBMIT_NOTE);
  const ledger = await ctx.ledgerSettings();
  const ledgerOn = ledger.on && options.ledger !== false;
  await checkFlags(ctx, file, options, ledger.on);
  checkRejectsToStdout(options, options.output === "-" ? "-o -" : ctx.globals.json ? "--json" : undefined);
  // A refused --interval must stop the run before anything is reserved, not after the upload.
  const pollIntervalMs = await pollInterval(ctx, options.interval);
  const sourcePath = file === "-" ? undefined : absolutePath(ctx, file);
  const outputs: OutputsRequest = {
    ...outputsRequest(ctx, options, { ledger: ledgerOn, joinSource: sourcePath }),
    ...(options.changes === undefined
      ? {}
      : {
          changes: {
            path: options.changes,
            format: options.changes.toLowerCase().endsWith(".xlsx") ? "xlsx" : "csv",
            destination: isStdout(options.changes)
              ? { stream: dataOut(ctx.io) }
              : { path: absolutePath(ctx, options.changes), force: Boolean(options.force) },
            listRows: Boolean(options.changesAppearedLeft),
          },
        }),
    countChanges: Boolean(options.changesSummary || options.exitOnChange) || ctx.outcome.awaited,
    ...(ledger.retentionSeconds === undefined ? {} : { retentionSeconds: ledger.retentionSeconds }),
  };
  const subject = { product, country: anyRegion ? "auto" : country };
  const flagsRequest = await runFlagsRequest(ctx, options, pollIntervalMs);
  await withTempDir(async (dir) => {
    const output = await runOutputsView(ctx, outputs, product, {
      summary: Boolean(options.changesSummary),
      exitOnChange: Boolean(options.exitOnChange),
    });
    const { options: prepare, done } = await preparationOptions(ctx, file, options, country);
    const printer = runPrinter(ctx, options, subject, pollIntervalMs, async (result) => {
      done();
      notePreparation(ctx, result);
      if (!ctx.globals.json) printPreparationSummary(ctx, result);
      const hint = await noCodeHint(result, anyRegion);
      if (hint) ctx.printer.note(hint);
    });
    // Whatever fails once a task is submitted (a store or temporary directory that fills up), the task goes on at the service.
    const goOn = (error: unknown): never => {
      throw printer.tasksSubmitted() ? tasksGoOn(error) : error;
    };
    const outcome = await submitRun(
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
        ...flagsRequest,
        retryNoResult: Boolean(options.retryNoResult),
        countUnanswered: true,
      },
      {
        ...(await runDeps(ctx, { product, workDir: dir, yes: options.yes, printer })),
        ...(output.fetchesResults ? { onSucceeded: output.stage } : {}),
        onBusyEnded: () => outputsStillFree(ctx, file, options),
      },
    )
      .catch(goOn)
      .finally(async () => {
        // A run that stopped before its list was read (no such file, another process's run waited for, Ctrl-C) stops the line too.
        done();
        await printer.stop();
      });
    if (!outcome) {
      if (options.dryRun) ctx.printer.note("Dry run: nothing was uploaded.");
      return;
    }
    await output.end(outcome);
    ctx.outcome.run = outcome.run.id;
    if (options.wait)
      ctx.outcome.charge(
        outcome.results.map((result) => result.task),
        await ctx.prices(),
      );
    if (ctx.globals.json && !takesStdout(options))
      ctx.printer.json({ ...runJson(outcome), changes: ctx.outcome.changes ? changeCounts(ctx.outcome.changes) : null });
    if (ctx.outcome.changed) ctx.printer.note("Something changed since the previous check of the list: exit 11 (--exit-on-change).");
  });
}

/**
 * After waiting for another process's run of this command: it may have written the
 * outputs this one was to write. Said before any request, so nothing is paid for an
 * output that cannot be written.
 */
async function outputsStillFree(ctx: Context, file: string, options: SubmitOptions): Promise<void> {
  try {
    await checkOutputs(
      ctx,
      { "-o": options.output, "--report": options.report, "--changes": options.changes },
      { force: options.force, reading: [file] },
    );
  } catch (error) {
    if (!(error instanceof BulkcheckError)) throw error;
    throw new UsageError(`${error.message} It was written while this command waited for the other run of it, which has finished.`, {
      hint: "That run's output is complete. To write this one too, give another -o (the results come from the ledger, nothing is paid again) or add --force.",
    });
  }
}

async function checkFlags(ctx: Context, file: string, options: SubmitOptions, ledgerSetting: boolean): Promise<void> {
  if (options.join && (file === "-" || options.output === undefined)) {
    throw new UsageError("--join needs a source file (not stdin) and -o FILE.");
  }
  if (options.changesAppearedLeft && options.changes === undefined) {
    throw new UsageError("--changes-appeared-left adds rows to the --changes file, and there is none.", { hint: "Add --changes FILE." });
  }
  const comparing = Object.entries({
    "--changes": options.changes !== undefined,
    "--changes-summary": options.changesSummary,
    "--exit-on-change": options.exitOnChange,
  }).flatMap(([flag, given]) => (given ? [flag] : []));
  for (const flag of comparing) {
    if (!options.wait) {
      throw new UsageError(`${flag} needs --wait (results do not exist until the tasks have finished).`, { hint: "Add --wait." });
    }
    if (options.ledger === false || !ledgerSetting) {
      throw new UsageError(
        `${flag} compares each result with the ledger's previous one, and ${options.ledger === false ? "--no-ledger keeps none" : `the ledger is off for profile "${ctx.profileName}"`}.`,
        { hint: options.ledger === false ? "Drop --no-ledger." : "Turn it on: bulkcheck config set ledger on" },
      );
    }
  }
  if (options.changes === "-" && (options.output === "-" || options.rejects === "-" || ctx.globals.json)) {
    throw new UsageError("--changes - wants stdout, and so does -o -, --rejects - or --json.", { hint: "Write one of them to a file." });
  }
  await checkOutputFlags(ctx, options, file);
  await checkOutputs(ctx, { "--changes": options.changes }, { force: options.force, reading: [file] });
}
