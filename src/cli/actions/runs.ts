import { UsageError } from "../../errors.js";
import type { RunCounts, RunSummary, RunTaskSummary, RunTotals } from "../../run/history.js";
import type { RunFilter, RunState, Scope } from "../../store/store.js";
import type { TableColumn } from "../../results/format-table.js";
import type { Context } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import type { Since } from "../parse-flags.js";
import { printTable } from "../table.js";
import { runSummaries, runDetails, runTotals } from "../../run/history.js";
import { count } from "../../format-count.js";
import { formatUsd } from "../../tasks/cost.js";

export interface RunsOptions {
  /** At most this many, the newest; all of them when undefined. */
  limit: number | undefined;
  /** Every service and profile's runs, not only the current one's. */
  all?: boolean;
  state?: RunState;
  since?: Since;
}

/**
 * The runs of this service and profile (or, with `all`, of every one) that the filters let
 * through, newest first, and their totals: with --json one object, `{runs, totals}`; else a
 * table of the runs (TSV when piped) and the totals on stderr, so a script reading the
 * table sees only runs.
 */
export async function runsAction(ctx: Context, options: RunsOptions): Promise<void> {
  const scope = options.all ? undefined : await currentScope(ctx);
  const since = options.since && ("at" in options.since ? options.since.at : new Date(ctx.now() - options.since.age * 1000).toISOString());
  const filter: RunFilter = {
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    ...(scope ? { scope } : {}),
    ...(options.state ? { state: options.state } : {}),
    ...(since ? { since } : {}),
  };
  const runs = await runSummaries(await ctx.store(), filter, await ctx.prices());
  const totals = runTotals(runs);
  if (ctx.globals.json) {
    ctx.printer.json(snakeCaseKeys({ runs, totals }));
    return;
  }
  if (runs.length === 0) {
    ctx.printer.note(nothingListed(filter));
    return;
  }
  printTable(ctx.printer, runColumns(scope === undefined), runs.map(runRow));
  for (const line of totalsLines(totals, scope)) ctx.printer.note(line);
}

/** This service and profile; without a base URL there is none, and --all is the way to see the runs. */
async function currentScope(ctx: Context): Promise<Scope> {
  try {
    return await ctx.scope();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const all = "Or list the runs of every service and profile: bulkcheck runs --all";
    throw new UsageError(error.message, { hint: error.hint ? `${error.hint}\n${all}` : all, cause: error });
  }
}

function nothingListed(filter: RunFilter): string {
  if (!filter.scope && !filter.state && !filter.since) {
    return "No runs yet. Start one with: bulkcheck submit <file> --type <service_type> --country <CC>";
  }
  const runs = `No ${filter.state ? `${filter.state} ` : ""}runs${filter.scope ? ` of ${where(filter.scope)}` : ""}`;
  const since = filter.since ? ` started since ${filter.since}` : "";
  return `${runs}${since}.${filter.scope ? " Every service and profile's: bulkcheck runs --all" : ""}`;
}

function where(scope: Scope): string {
  return `${scope.baseUrl} (profile ${scope.profile})`;
}

/**
 * The runs table. Its columns keep their places (scripts cut them by position): where a
 * run went comes last. Under --all that is what tells the rows apart, so it stays; for one
 * service and profile every row says the same (the totals name it), so it goes first on a
 * narrow terminal.
 */
function runColumns(everyScope: boolean): TableColumn[] {
  const fit = everyScope ? {} : { dropOrder: 0 };
  return [
    { header: "RUN", whole: true },
    { header: "STARTED", dropOrder: 3 },
    { header: "STATE" },
    { header: "SOURCE" },
    { header: "PRODUCT", dropOrder: 4 },
    { header: "COUNTRIES", dropOrder: 5 },
    { header: "KEPT", count: true },
    { header: "REUSED", count: true },
    { header: "UPLOADED", count: true },
    { header: "CHARGED" },
    { header: "OUTPUT", dropOrder: 1 },
    { header: "BY", dropOrder: 2 },
    { header: "SERVICE", ...fit },
    { header: "PROFILE", ...fit },
  ];
}

function runRow(run: RunSummary): string[] {
  return [
    run.id,
    run.startedAt.replace("T", " ").slice(0, 16),
    run.state,
    run.source,
    run.product,
    run.countries.join(" "),
    String(run.kept),
    String(run.reused),
    String(run.uploaded),
    formatUsd(run.chargedMicros),
    run.output ?? "",
    [run.user, run.host].filter(Boolean).join("@"),
    run.service,
    run.profile,
  ];
}

/** The totals as people read them: in all, then per product (and where it ran, under --all) when the runs listed have more than one. */
function totalsLines(totals: RunTotals, scope: Scope | undefined): string[] {
  const lines = [`Totals of ${runsCount(totals)} ${scope ? `of ${where(scope)}` : "of every service and profile"}: ${figures(totals)}.`];
  if (totals.groups.length > 1) {
    const scopes = new Set(totals.groups.map((group) => `${group.service}\n${group.profile}`));
    for (const group of totals.groups) {
      const label = scopes.size > 1 ? `${group.product} at ${where({ baseUrl: group.service, profile: group.profile })}` : group.product;
      lines.push(`  ${label}, ${runsCount(group)}: ${figures(group)}.`);
    }
  }
  return lines;
}

function runsCount(counts: RunCounts): string {
  return `${count(counts.runs)} run${counts.runs === 1 ? "" : "s"}`;
}

function figures(counts: RunCounts): string {
  const numbers = (["kept", "reused", "uploaded", "padded", "checked"] as const).map((name) => `${count(counts[name])} ${name}`);
  return `${numbers.join(", ")}; charged ${formatUsd(counts.chargedMicros)}, saved by reuse ${formatUsd(counts.savedMicros)}`;
}

export async function runsShowAction(ctx: Context, id: string): Promise<void> {
  const details = await runDetails(await ctx.store(), id, await ctx.prices());
  if (!details) {
    throw new UsageError(`No run ${id} (or more than one run starts so) in ${(await ctx.store()).location}.`, {
      hint: "List the runs with: bulkcheck runs",
    });
  }
  if (ctx.globals.json) {
    ctx.printer.json(snakeCaseKeys(details));
    return;
  }
  const { run, tasks } = details;
  const lines: Array<[string, string]> = [
    ["run", run.id],
    ["service", run.service],
    ["profile", run.profile],
    ["state", run.note ? `${run.state} (${run.note})` : run.state],
    ["started", run.startedAt],
    ["finished", run.finishedAt ?? ""],
    ["source", run.source],
    ["product", run.product],
    ["countries", run.countries.join(", ")],
    ["kept", count(run.kept)],
    ["reused from the ledger", count(run.reused)],
    ["uploaded", count(run.uploaded)],
    ["padded", count(run.padded)],
    ["checked", count(run.checked)],
    ["charged", formatUsd(run.chargedMicros)],
    ["saved by reuse", formatUsd(run.savedMicros)],
    ["output", run.output ?? ""],
    [
      "chain",
      (run.chain ?? [])
        .map((link) => `${link.condition ?? link.product} (run ${link.run}${link.parts ? `, parts ${link.parts}` : ""})`)
        .join(" → "),
    ],
    ["by", [run.user, run.host].filter(Boolean).join("@")],
  ];
  const width = Math.max(...lines.map(([label]) => label.length));
  for (const [label, value] of lines) if (value) ctx.printer.note(`${label.padEnd(width)}  ${value}`);
  if (tasks.length > 0) printTable(ctx.printer, TASK_COLUMNS, tasks.map(taskRow));
}

const TASK_COLUMNS = [
  { header: "PART" },
  { header: "TASK", whole: true },
  { header: "COUNTRY", dropOrder: 2 },
  { header: "NUMBERS" },
  { header: "STATUS" },
  { header: "CHECKED" },
  { header: "NO RESULT", dropOrder: 3 },
  { header: "CHECKED AT", dropOrder: 1 },
  { header: "IN LEDGER", dropOrder: 4 },
];

function taskRow(task: RunTaskSummary): string[] {
  const figure = (value: number | undefined) => (value === undefined ? "" : value.toLocaleString("en-US"));
  return [
    String(task.part),
    task.taskId ?? "",
    task.country ?? "",
    figure(task.numbers),
    task.status,
    figure(task.checked),
    figure(task.noResult),
    task.checkedAt ?? "",
    task.recorded ? "yes" : "",
  ];
}
