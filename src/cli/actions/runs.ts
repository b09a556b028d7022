import { UsageError } from "../../errors.js";
import type { RunSummary, RunTaskSummary } from "../../run/history.js";
import type { Context } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import { printTable } from "../table.js";
import { runSummaries, runDetails } from "../../run/history.js";
import { formatUsd } from "../../tasks/cost.js";

export interface RunsOptions {
  limit: number;
}

export async function runsRun(ctx: Context, options: RunsOptions): Promise<void> {
  const runs = await runSummaries(await ctx.store(), options.limit, await ctx.prices());
  if (ctx.globals.json) {
    for (const run of runs) ctx.printer.json(snakeCaseKeys(run));
    return;
  }
  if (runs.length === 0) {
    ctx.printer.note("No runs yet. Start one with: bulkcheck submit <file> --type <service_type> --country <CC>");
    return;
  }
  printTable(
    ctx.printer,
    RUN_COLUMNS,
    runs.map((run) => runRow(run, formatUsd)),
  );
}

const RUN_COLUMNS = [
  { header: "RUN", whole: true },
  { header: "STARTED", dropOrder: 3 },
  { header: "STATE" },
  { header: "SOURCE" },
  { header: "PRODUCT", dropOrder: 4 },
  { header: "COUNTRIES", dropOrder: 5 },
  { header: "KEPT" },
  { header: "REUSED" },
  { header: "UPLOADED" },
  { header: "CHARGED" },
  { header: "OUTPUT", dropOrder: 1 },
  { header: "BY", dropOrder: 2 },
];

function runRow(run: RunSummary, usd: (micros: number) => string): string[] {
  return [
    run.id,
    run.startedAt.replace("T", " ").slice(0, 16),
    run.state,
    run.source,
    run.product,
    run.countries.join(" "),
    run.kept.toLocaleString("en-US"),
    run.reused.toLocaleString("en-US"),
    run.uploaded.toLocaleString("en-US"),
    usd(run.chargedMicros),
    run.output ?? "",
    [run.user, run.host].filter(Boolean).join("@"),
  ];
}

export async function runsShowRun(ctx: Context, id: string): Promise<void> {
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
    ["state", run.note ? `${run.state} (${run.note})` : run.state],
    ["started", run.startedAt],
    ["finished", run.finishedAt ?? ""],
    ["source", run.source],
    ["product", run.product],
    ["countries", run.countries.join(", ")],
    ["kept", run.kept.toLocaleString("en-US")],
    ["reused from the ledger", run.reused.toLocaleString("en-US")],
    ["uploaded", run.uploaded.toLocaleString("en-US")],
    ["charged", formatUsd(run.chargedMicros)],
    ["output", run.output ?? ""],
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
  const count = (value: number | undefined) => (value === undefined ? "" : value.toLocaleString("en-US"));
  return [
    String(task.part),
    task.taskId ?? "",
    task.country ?? "",
    count(task.numbers),
    task.status,
    count(task.checked),
    count(task.noResult),
    task.checkedAt ?? "",
    task.recorded ? "yes" : "",
  ];
}
