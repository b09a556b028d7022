import { UsageError } from "../../errors.js";
import type { RunSummary, RunTaskSummary } from "../../run/history.js";
import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { snakeCaseKeys } from "../json-keys.js";
import { parseCount } from "../parse-flags.js";
import { printTable } from "../table.js";
import { examples } from "./shared/help.js";

export interface RunsOptions {
  limit?: number;
}

/** Runs shown when --limit is not given. */
const DEFAULT_LIMIT = 20;

/** `bulkcheck runs` and `bulkcheck runs show RUN_ID`. Tests pass their own `run`/`show` to see what the flags parse into. */
export function runsCommand(invoke: Invoke, run = runsRun, show = runsShowRun) {
  const command = new Command("runs")
    .description("list the runs of submit (newest first): what each checked, reused from the ledger, uploaded and cost")
    .option("--limit <n>", `show at most the n most recent runs (default ${DEFAULT_LIMIT})`, parseCount)
    .addHelpText("after", examples(["bulkcheck runs", "bulkcheck runs --limit 5 --json", "bulkcheck runs show 20261127-020001-3fa9c1"]))
    .action((options, cmd) => invoke(cmd, (ctx) => run(ctx, options)));
  command.addCommand(
    new Command("show")
      .description("show one run and its tasks")
      .argument("<run-id>", "a run id, or the start of one")
      .action((id, _options, cmd) => invoke(cmd, (ctx) => show(ctx, id))),
  );
  return command;
}

export async function runsRun(ctx: Context, options: RunsOptions): Promise<void> {
  const { runSummaries } = await import("../../run/history.js");
  const { formatUsd } = await import("../../tasks/cost.js");
  const runs = await runSummaries(await ctx.store(), options.limit ?? DEFAULT_LIMIT, await ctx.prices());
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
  const { runDetails } = await import("../../run/history.js");
  const { formatUsd } = await import("../../tasks/cost.js");
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
