import { UsageError } from "../../errors.js";
import type { LedgerRow } from "../../store/store.js";
import type { Context } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import { readAllStdin } from "../prompt.js";
import { printTable } from "../table.js";
import { absolutePath } from "../paths.js";
import { checkOutputs, isStdout } from "./shared/destination.js";
import { readNumbers } from "../../ledger/numbers.js";
import { countryCode, productFromFlag } from "./shared/preparation.js";
import { count } from "../../format-count.js";
import { exportLedger } from "../../ledger/export.js";

export interface NumbersOptions {
  country?: string;
  product?: string;
}

export interface PruneOptions {
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
  return { product: productFromFlag(product) };
}

export async function ledgerStats(ctx: Context): Promise<void> {
  const store = await ctx.store();
  const stats = await store.stats();
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

export async function ledgerLookup(ctx: Context, args: string[], options: NumbersOptions): Promise<void> {
  const identifiers = await numbersOf(ctx, args, options);
  const store = await ctx.store();
  const rows = await store.lookup(identifiers, productFilter(options.product));
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

export async function ledgerForget(ctx: Context, args: string[], options: NumbersOptions): Promise<void> {
  const identifiers = await numbersOf(ctx, args, options);
  const store = await ctx.store();
  const removed = await store.forget(identifiers);
  if (ctx.globals.json) ctx.printer.json({ numbers: identifiers.length, results_removed: removed });
  else ctx.printer.note(`Erased ${removed} result(s) of ${identifiers.length} number(s) from ${store.location}.`);
}

export async function ledgerPrune(ctx: Context, options: PruneOptions): Promise<void> {
  const seconds = options.olderThan ?? (await ctx.ledgerSettings()).retentionSeconds;
  if (seconds === undefined) {
    throw new UsageError("How old must a result be to go? Give --older-than, e.g. --older-than 180d.", {
      hint: "Or set a retention once, so every run prunes: bulkcheck config set ledger-retention 180d",
    });
  }
  const store = await ctx.store();
  const before = new Date(ctx.now() - seconds * 1000).toISOString();
  const removed = await store.prune(before);
  if (ctx.globals.json) ctx.printer.json({ checked_before: before, results_removed: removed });
  else ctx.printer.note(`Removed ${removed} result(s) checked before ${before}.`);
}

export async function ledgerExport(ctx: Context, options: ExportOptions): Promise<void> {
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
