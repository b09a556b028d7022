import { BulkcheckError, UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { absolutePath } from "../paths.js";
import { withTempDir } from "../../temp-dir.js";
import { checkOutputFlags, outputsRequest, tasksGoOn, type AfterUploadFlags } from "./shared/after-upload.js";
import { checkOutputs, isStdout } from "./shared/destination.js";
import type { PreparationFlags } from "./shared/preparation.js";
import type { SubmitFlags } from "./shared/submission.js";
import { pollInterval } from "./shared/waiting.js";
import { checkRejectsToStdout, preparationOptions, productFromFlag } from "./shared/preparation.js";
import { noCodeHint, notePreparation, printPreparationSummary } from "../views/preparation-view.js";
import { noCodeNumbers } from "../../prepare/no-code.js";
import { countryChoice } from "./shared/country-choice.js";
import { runDeps, runFlagsRequest } from "./shared/submission.js";
import { RESUBMIT_NOTE, runJson, runPrinter, takesStdout } from "../views/run-printer.js";
import { assertKeyLength } from "../../tasks/idempotency.js";
import { submitRun } from "../../run/submit-run.js";
import type { SubmitRequest } from "../../run/submit-request.js";
import { parseChain, describeCondition, type ChainStep } from "../../chain/chain.js";
import { submitChain, type ChainEvent } from "../../chain/submit-chain.js";
import { partRange } from "../../chain/part-by-part.js";
import type { RunOutcome } from "../../run/submit-request.js";
import type { Task } from "../../spec/task.js";
import { endChain, productCounts } from "../../chain/chain-end.js";
import { formatUsd } from "../../tasks/cost.js";
import { runWritingDeps } from "./shared/output-deps.js";
import { count } from "../../format-count.js";
import { billing } from "../../tasks/billing.js";
import { describeBilling } from "../views/billing-report.js";
import { describePlan, reuseLines } from "../views/plan-view.js";
import { outputRecord, runOutputs } from "./shared/run-outputs.js";
import type { OutputsRequest } from "../../outputs/outputs-request.js";
import { dataOut } from "../io.js";
import { changeCounts } from "../../notify/summary.js";

export interface SubmitOptions extends PreparationFlags, SubmitFlags, AfterUploadFlags {
  type: string;
  /** --then PRODUCT[:COLUMN=VALUE,...], in order: the later products of a chain (see chain/chain.ts). */
  then?: string[];
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
  const steps = parseChain(product, options.then ?? []);
  if (steps.length > 0) checkChainFlags(options, steps, country !== undefined || anyRegion);
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
    // A chain stages each product's results in outputs of its own (submitChainRun).
    const output =
      steps.length === 0
        ? await runOutputs(ctx, outputs, product, {
            summary: Boolean(options.changesSummary),
            exitOnChange: Boolean(options.exitOnChange),
          })
        : undefined;
    const { options: prepare, done } = await preparationOptions(ctx, file, options, country);
    const printer = runPrinter(ctx, options, subject, pollIntervalMs, async (result) => {
      done();
      notePreparation(ctx, result);
      if (!ctx.globals.json) printPreparationSummary(ctx, result);
      const hint = noCodeHint(await noCodeNumbers(result), anyRegion);
      if (hint) ctx.printer.note(hint);
    });
    // Whatever fails once a task is submitted (a store or temporary directory that fills up), the task goes on at the service.
    const goOn = (error: unknown): never => {
      throw printer.tasksSubmitted() ? tasksGoOn(error) : error;
    };
    const request: SubmitRequest = {
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
    };
    if (!output) {
      await submitChainRun(ctx, { file, options, request, steps, outputs, dir, pollIntervalMs, printer, country }).finally(done);
      return;
    }
    const outcome = await submitRun(request, {
      ...(await runDeps(ctx, { product, workDir: dir, yes: options.yes, printer })),
      ...(output.fetchesResults ? { onSucceeded: output.stage } : {}),
      onBusyEnded: () => outputsStillFree(ctx, file, options),
    })
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

/** What a chain (--then) needs of the flags: results to choose by (--wait), keys derived from its runs, and a country for its later products. */
function checkChainFlags(options: SubmitOptions, steps: readonly ChainStep[], hasCountry: boolean): void {
  if (!options.wait && !options.dryRun) {
    throw new UsageError("--then needs --wait: a later product's numbers are chosen by the earlier products' results.", {
      hint: "Add --wait.",
    });
  }
  if (options.idempotencyKey !== undefined) {
    throw new UsageError("--idempotency-key names one product's tasks, and --then checks several.", {
      hint: "Drop --idempotency-key: a chain's keys are derived from its runs, so carrying it on sends the same ones.",
    });
  }
  const needsCountry = steps.find((step) => step.product !== "carrier_batch");
  if (needsCountry && !hasCountry) {
    throw new UsageError(`--then ${needsCountry.product} needs --country (only carrier_batch can go without one).`, {
      hint: "Add --country CC, or --country auto.",
    });
  }
}

/** The run of a chain: each product's run told by its own printer, then the output with every product's columns. */
async function submitChainRun(
  ctx: Context,
  chain: {
    file: string;
    options: SubmitOptions;
    request: SubmitRequest;
    steps: readonly ChainStep[];
    outputs: OutputsRequest;
    dir: string;
    pollIntervalMs: number;
    printer: ReturnType<typeof runPrinter>;
    country: string | undefined;
  },
): Promise<void> {
  const { file, options, request, steps, outputs, dir, pollIntervalMs } = chain;
  const products = [request.product, ...steps.map((step) => step.product)];
  const prices = await ctx.prices();
  const productOutputs = await Promise.all(
    // The first product's outputs tell the chain's changes (one summary of every product's).
    products.map((product, index) =>
      runOutputs(ctx, outputs, product, {
        summary: index === 0 && Boolean(options.changesSummary),
        exitOnChange: index === 0 && Boolean(options.exitOnChange),
      }),
    ),
  );
  const printers = products.map((product, index) =>
    index === 0
      ? chain.printer
      : runPrinter(ctx, options, { product, country: request.command.country }, pollIntervalMs, () => Promise.resolve()),
  );
  const goOn = (error: unknown): never => {
    throw printers.some((printer) => printer.tasksSubmitted()) ? tasksGoOn(error) : error;
  };
  const outcome = await submitChain(request, steps, {
    step: async (product, index) => ({
      ...(await runDeps(ctx, { product, workDir: dir, yes: options.yes, printer: printers[index]! })),
      onSucceeded: productOutputs[index]!.stage,
      ...(index === 0 ? { onBusyEnded: () => outputsStillFree(ctx, file, options) } : {}),
    }),
    results: async (index, stepOutcome) => {
      // Every task of a chain's run is staged as it finishes: a later product is chosen by these results.
      const staged = await productOutputs[index]!.outputs.results(stepOutcome);
      if (!staged) throw new Error(`The results of run ${stepOutcome.run.id} were not staged.`);
      return staged;
    },
    staged: (index, results, settings) => productOutputs[index]!.outputs.staged(results, settings),
    onEvent: (event) => drawChainStep(ctx, event, prices, request.command.country),
  })
    .catch(goOn)
    .finally(async () => {
      for (const printer of printers) await printer.stop();
    });
  if (!outcome) {
    if (options.dryRun) ctx.printer.note("Dry run: nothing was uploaded.");
    return;
  }
  const writing = await runWritingDeps(ctx, outputs, { runId: outcome.first.outcome.run.id }, productOutputs[0]!.drawRunEvent);
  await endChain(
    outcome,
    outputs,
    {
      ...outputRecord(ctx, outputs),
      chain: [
        { product: outcome.first.product, run: outcome.first.outcome.run.id },
        ...outcome.later.flatMap(({ product, outcome: { run }, step: { condition }, early }) => {
          const link = { product, ...(condition ? { condition: `${product}:${describeCondition(condition)}` } : {}) };
          return [...early.map((part) => ({ ...link, run: part.run.id, parts: partRange(part.parts) })), { ...link, run: run.id }];
        }),
      ],
    },
    {
      ...writing,
      outputs: productOutputs.map((each) => each.outputs),
      onEvent: (event) => {
        if (event.type === "chain merged") {
          ctx.printer.note(
            `Wrote ${count(event.rows)} rows${event.path === undefined ? "" : ` to ${event.path}`} with the columns of ${products.join(", ")}: ${event.columns.join(", ")}.`,
          );
          ctx.outcome.output = event.path === undefined ? "-" : absolutePath(ctx, event.path);
          if (ctx.globals.json && event.path !== undefined) {
            ctx.printer.json({
              type: "output",
              run: outcome.first.outcome.run.id,
              rows_written: event.rows,
              path: absolutePath(ctx, event.path),
              format: outputs.output?.format ?? "csv",
              columns: event.columns,
            });
          }
        } else if (event.type === "chain done") {
          ctx.printer.note(`Done. Every product's tasks have finished: ${event.taskIds.join(" ") || "none was needed"}.`);
        } else writing.onEvent(event);
      },
    },
  ).catch((error: unknown) => {
    throw tasksGoOn(error);
  });
  // The join or merged file told the first product's counts; each later product's follow (the merged file's, all of them).
  const bought = [{ ...outcome.first, early: [] as readonly RunOutcome[], selected: outcome.first.outcome.plan.kept }, ...outcome.later];
  for (const [index, step] of bought.entries()) {
    if (index === 0 && outputs.output?.join) continue;
    const { numbers, ...counts } = productCounts(step.outcome, step.early, step.selected);
    for (const line of describeBilling(billing(tasksOf([...step.early, step.outcome]), prices), counts))
      ctx.printer.note(`${step.product} (${count(numbers)} numbers): ${line}`);
  }
  ctx.outcome.run = outcome.first.outcome.run.id;
  const failedRuns = outcome.failed?.early ?? [];
  ctx.outcome.charge(tasksOf([...bought.flatMap((step) => [...step.early, step.outcome]), ...failedRuns]), prices);
  if (outcome.failed) {
    const { step, error } = outcome.failed;
    ctx.printer.note(
      `${step.product}'s task failed, so the chain stopped there: the output has the earlier products' results, and ${step.product}'s numbers say failed (the next run of this command reuses those results and checks ${step.product} again).`,
    );
    throw outcome.firstFailed ?? error;
  }
  if (outcome.firstFailed) throw outcome.firstFailed;
  if (ctx.globals.json && !takesStdout(options)) {
    ctx.printer.json({
      ...runJson(outcome.first.outcome),
      product: outcome.first.product,
      changes: ctx.outcome.changes ? changeCounts(ctx.outcome.changes) : null,
      then: outcome.later.map((later) => ({
        ...runJson(later.outcome),
        product: later.product,
        part_by_part: later.early.map((part) => ({ ...runJson(part), parts: partRange(part.parts) })),
        condition: later.step.condition
          ? { product: later.step.condition.product, column: later.step.condition.column, values: later.step.condition.values }
          : null,
      })),
    });
  }
}

function tasksOf(outcomes: readonly Pick<RunOutcome, "results">[]): Task[] {
  return outcomes.flatMap(({ results }) => results.map((result) => result.task));
}

/** A later product's run beginning: on how many numbers, and what its condition spared. */
function drawChainStep(ctx: Context, event: ChainEvent, prices: Record<string, number>, country: string | undefined): void {
  const { step } = event;
  const where = step.condition ? ` where ${step.condition.product} says ${describeCondition(step.condition)}` : "";
  if (event.type === "bound") {
    ctx.printer.note(`Plan: ${describePlan(event.plan, { product: event.step.product, country })}.`);
    for (const line of reuseLines(event.plan)) ctx.printer.note(line);
    return;
  }
  if (event.type === "parts") {
    const { parts, plan } = event;
    const carried = event.continued ? " (its run carried on)" : "";
    ctx.printer.note(
      `Then ${step.product}${where}, part by part: parts ${partRange(parts)} of the list are checked, and select ${count(parts.selected)} numbers${carried}: ${describePlan(plan, { product: step.product, country })}.`,
    );
    for (const line of reuseLines(plan)) ctx.printer.note(line);
    return;
  }
  if (event.type === "parts stopped") {
    const { parts, stop } = event;
    const why =
      stop.reason === "quota"
        ? `the service has no room for its task of parts ${partRange(parts)} while the earlier product's tasks run (${stop.error.message})`
        : `its task of parts ${partRange(parts)} failed (refunded in full)`;
    ctx.printer.note(`${step.product} part by part stops: ${why}. Those numbers and the rest are checked once every earlier result is in.`);
    return;
  }
  const { selected, kept } = event;
  if (event.upperBound) {
    ctx.printer.note(
      `Then ${step.product}${where}: at most ${count(kept)} numbers; its plan below is an upper bound${step.condition ? ", as the condition is known only once the earlier results are in" : ""}.`,
    );
    return;
  }
  const spared = kept - selected;
  const early = event.early ? `, ${count(event.early)} of them checked part by part above` : "";
  ctx.printer.note(
    `Then ${step.product}${where}: ${count(selected)} of ${count(kept)} numbers${early}${spared > 0 ? `; the condition spares ${count(spared)} (${formatUsd(spared * (prices[step.product] ?? 0))})` : ""}.`,
  );
}
