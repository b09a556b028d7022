import { existsSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../../config/paths.js";
import { InterruptedError, UsageError } from "../../errors.js";
import { forgetNumbers, pruneResults, type ErasureReport, type ErasureScope } from "../../run/erase.js";
import { openStore } from "../../store/open.js";
import type { LedgerRow, Store } from "../../store/store.js";
import type { Context } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import { canPrompt, confirm, readAllStdin } from "../prompt.js";
import { printTable } from "../table.js";
import { absolutePath } from "../paths.js";
import { checkOutputs, isStdout } from "./shared/destination.js";
import { readNumbers } from "../../ledger/numbers.js";
import { STORE_FILE } from "../services.js";
import { countryCode, productFromFlag } from "./shared/preparation.js";
import { count } from "../../format-count.js";
import { exportLedger } from "../../ledger/export.js";

export interface NumbersOptions {
  country?: string;
  product?: string;
}

interface ErasureFlags {
  dryRun?: boolean;
  yes?: boolean;
}

export type ForgetOptions = NumbersOptions & ErasureFlags;

export interface PruneOptions extends ErasureFlags {
  olderThan?: number;
}

export interface ExportOptions {
  output?: string;
  format?: "csv" | "tsv" | "jsonl" | "json" | "xlsx";
  product?: string;
  since?: number;
  force?: boolean;
}

/** Numbers from the arguments and stdin (`-`), read as `validate` reads a list. */
async function numbersOf(ctx: Context, args: readonly string[], options: NumbersOptions): Promise<string[]> {
  const typed: string[] = [];
  for (const arg of args) typed.push(...(arg === "-" ? (await readAllStdin(ctx.io)).split(/\r?\n/) : [arg]).filter((line) => line.trim()));
  const { identifiers, unreadable } = readNumbers(
    typed,
    options.country === undefined ? undefined : countryCode("--country", options.country),
  );
  for (const text of unreadable)
    ctx.printer.warn(
      `"${text}" is not a phone number${options.country ? "" : " (give --country for numbers written without their country code)"}; skipped.`,
    );
  if (identifiers.length === 0)
    throw new UsageError("No phone number to look for.", { hint: "Give numbers as arguments, or - to read them from stdin." });
  return identifiers;
}

/** --product as the service's product code (aliases and near misses said as for submit's --type). */
function productFilter(product: string | undefined): { product?: string } {
  if (product === undefined) return {};
  return { product: productFromFlag(product, "--product") };
}

export async function ledgerStatsAction(ctx: Context): Promise<void> {
  const store = await ctx.store();
  const stats = await store.ledger.stats();
  if (ctx.globals.json) {
    ctx.printer.json(snakeCaseKeys({ ...stats, location: store.location }));
    return;
  }
  ctx.printer.note(
    `${store.location}: ${count(stats.results)} results of ${count(stats.numbers)} numbers from ${count(stats.tasks)} tasks${stats.bytes === undefined ? "" : `, ${count(Math.round(stats.bytes / 1024))} KiB`}.`,
  );
  if (stats.oldest) ctx.printer.note(`Checked from ${stats.oldest} to ${stats.newest}.`);
  if (stats.groups.length > 0) {
    printTable(
      ctx.printer,
      ["PRODUCT", "SERVICE", "PROFILE", "RESULTS", "NUMBERS", "OLDEST", "NEWEST"],
      stats.groups.map((group) => [
        group.product,
        group.scope.baseUrl,
        group.scope.profile,
        count(group.results),
        count(group.numbers),
        group.oldest,
        group.newest,
      ]),
    );
  }
}

export async function ledgerLookupAction(ctx: Context, args: string[], options: NumbersOptions): Promise<void> {
  const identifiers = await numbersOf(ctx, args, options);
  const store = await ctx.store();
  const rows = await store.ledger.lookup(identifiers, productFilter(options.product));
  if (ctx.globals.json) {
    for (const row of rows) ctx.printer.json(ledgerRowJson(row));
    return;
  }
  if (rows.length === 0) {
    ctx.printer.note(`No stored result for ${identifiers.length === 1 ? identifiers[0] : `these ${identifiers.length} numbers`}.`);
    return;
  }
  printTable(
    ctx.printer,
    [
      { header: "IDENTIFIER", whole: true },
      { header: "PRODUCT" },
      { header: "CHECKED AT" },
      { header: "RESULT" },
      { header: "TASK", dropOrder: 1 },
    ],
    rows.map((row) => [
      row.identifier,
      row.product,
      row.checkedAt,
      Object.entries(row.values)
        .map(([column, value]) => `${column}=${value}`)
        .join(" "),
      row.taskId ?? "",
    ]),
  );
}

function ledgerRowJson(row: LedgerRow) {
  return {
    identifier: row.identifier,
    product: row.product,
    checked_at: row.checkedAt,
    task_id: row.taskId ?? null,
    base_url: row.scope.baseUrl,
    profile: row.scope.profile,
    ...row.values,
  };
}

export async function ledgerForgetAction(ctx: Context, args: string[], options: ForgetOptions): Promise<void> {
  const identifiers = await numbersOf(ctx, args, options);
  const filter = { ...productFilter(options.product), ...(options.dryRun ? { dryRun: true } : {}) };
  const numbers = `${count(identifiers.length)} number(s)`;
  await withErasureScope(ctx, async (scope, store) => {
    await confirmShared(
      ctx,
      store,
      options,
      async () => (await store.ledger.forget(identifiers, { ...filter, dryRun: true })).results,
      (results) => `Erase ${results} result(s) of ${numbers} from the shared store ${store.location}, for every machine that uses it?`,
    );
    const report = await forgetNumbers(scope, identifiers, filter);
    if (ctx.globals.json) ctx.printer.json({ numbers: identifiers.length, ...erasureJson(report, options) });
    else {
      printErasure(ctx, report, options, `of ${numbers}`, (verb) => {
        const { files, rows = 0 } = report.staged;
        return `${verb} ${count(rows)} row(s) of them from ${count(files)} result file(s) that unfinished runs staged; carried on, such a run writes those numbers without a result.`;
      });
    }
  });
}

export async function ledgerPruneAction(ctx: Context, options: PruneOptions): Promise<void> {
  const seconds = options.olderThan ?? (await ctx.ledgerSettings()).retentionSeconds;
  if (seconds === undefined) {
    throw new UsageError("How old must a result be to go? Give --older-than, e.g. --older-than 180d.", {
      hint: "Or set a retention once, so every run prunes: bulkcheck config set ledger-retention 180d",
    });
  }
  const before = new Date(ctx.now() - seconds * 1000).toISOString();
  await withErasureScope(ctx, async (scope, store) => {
    await confirmShared(
      ctx,
      store,
      options,
      async () => (await store.ledger.prune(before, { dryRun: true })).results,
      (results) =>
        `Remove ${results} result(s) checked before ${before} from the shared store ${store.location}, for every machine that uses it?`,
    );
    const report = await pruneResults(scope, before, options.dryRun ? { dryRun: true } : {});
    if (ctx.globals.json) ctx.printer.json({ checked_before: before, ...erasureJson(report, options) });
    else {
      printErasure(
        ctx,
        report,
        options,
        `checked before ${before}`,
        (verb) =>
          `${verb} ${count(report.staged.files)} result file(s) that unfinished runs staged; carried on, such a run downloads them again if the service still has them.`,
      );
    }
  });
}

/**
 * Runs `erase` with what an erasure reaches from here (see ErasureScope): the store in use,
 * and this machine's own SQLite store when another is in use and it exists (it holds what
 * was checked here before the switch, unless `store import` moved it).
 */
async function withErasureScope(ctx: Context, erase: (scope: ErasureScope, store: Store) => Promise<void>): Promise<void> {
  const store = await ctx.store();
  const dir = stateDir(ctx.env);
  const localPath = join(dir, STORE_FILE);
  const local = store.location !== localPath && existsSync(localPath) ? await openStore(localPath, ctx.env) : undefined;
  try {
    await erase({ stores: local ? [store, local] : [store], stateDir: dir }, store);
  } finally {
    await local?.close();
  }
}

/**
 * A shared store is everyone's: erasing from it is asked for on a terminal, unless --yes (or
 * --dry-run, which erases nothing, or there is nothing of it to erase). Where nobody can
 * answer, it stops before erasing anything, as submit does before reserving.
 */
async function confirmShared(
  ctx: Context,
  store: Store,
  options: ErasureFlags,
  results: () => Promise<number>,
  question: (results: string) => string,
): Promise<void> {
  if (store.kind !== "postgres" || options.dryRun || options.yes) return;
  const found = await results();
  if (found === 0) return;
  if (!canPrompt(ctx.io)) {
    throw new UsageError(
      "No one can confirm erasing from the shared store here (stdin or stderr is not a terminal): add --yes to erase without a prompt.",
      { hint: `Nothing was erased. --dry-run says what would be (${count(found)} result(s) in the shared store).` },
    );
  }
  if (!(await confirm(ctx.printer, question(count(found)), { signal: ctx.signal, cancelled: { message: NOTHING_ERASED } }))) {
    throw new InterruptedError(NOTHING_ERASED);
  }
}

const NOTHING_ERASED = "Cancelled; nothing was erased.";

function erasureJson(report: ErasureReport, options: ErasureFlags) {
  return {
    dry_run: Boolean(options.dryRun),
    results_removed: report.stores.reduce((sum, store) => sum + store.results, 0),
    stores: report.stores.map(({ location, results, remembered, uncleared }) => ({
      location,
      results,
      remembered: remembered ?? 0,
      uncleared: uncleared ?? null,
    })),
    staged_files: report.staged.files,
    ...(report.staged.rows === undefined ? {} : { staged_rows: report.staged.rows }),
  };
}

/**
 * Says what an erasure did: per store, the results of `what` (which numbers, or checked before
 * when), then the staged result files, as `staged` words them for the verb.
 */
function printErasure(ctx: Context, report: ErasureReport, options: ErasureFlags, what: string, staged: (verb: string) => string): void {
  const verb = options.dryRun ? "Would erase" : "Erased";
  for (const [index, { location, results, remembered, uncleared }] of report.stores.entries()) {
    ctx.printer.note(
      index === 0
        ? `${verb} ${count(results)} result(s) ${what} from ${location}.`
        : `${verb} ${count(results)} result(s) from ${location}, this machine's own store (not in use).`,
    );
    if (remembered) {
      ctx.printer.note(
        `Runs open there could bring ${count(remembered)} of them back: ${location} keeps a hash of each (not the digits) until those runs end, and they never record nor write their results.`,
      );
    }
    if (uncleared) {
      ctx.printer.warn(
        `${location} did not clear the erased results from its files: ${uncleared}. They stay in the tables' files until their owner runs VACUUM FULL bulkcheck.results, bulkcheck.task_number_chunks.`,
      );
    }
  }
  if (report.staged.files > 0) ctx.printer.note(staged(verb));
  if (options.dryRun) ctx.printer.note("Nothing was erased (--dry-run).");
}

export async function ledgerExportAction(ctx: Context, options: ExportOptions): Promise<void> {
  await checkOutputs(ctx, { "-o": options.output }, { force: options.force });
  const store = await ctx.store();
  const filter = {
    ...productFilter(options.product),
    ...(options.since === undefined ? {} : { since: new Date(ctx.now() - options.since * 1000).toISOString() }),
  };
  const format = options.format ?? (options.output?.toLowerCase().endsWith(".xlsx") ? "xlsx" : "csv");
  if (format === "xlsx" && isStdout(options.output) && ctx.io.stdout.isTTY) {
    throw new UsageError("--format xlsx writes an Excel workbook, which a terminal cannot show.", {
      hint: "Write it to a file with -o ledger.xlsx.",
    });
  }
  const destination = isStdout(options.output)
    ? { stream: ctx.io.stdout }
    : { path: absolutePath(ctx, options.output), force: Boolean(options.force) };
  const written = await exportLedger(store, filter, format, destination);
  if (!isStdout(options.output)) ctx.printer.note(`Wrote ${written.rows} result(s) to ${options.output}.`);
}
