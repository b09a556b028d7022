import { Command, Option } from "../commander.js";
import type { Invoke } from "../context.js";
import { parseCount, parseSince } from "../parse-flags.js";
import { examples } from "./shared/help.js";
import { RUN_STATES } from "../../store/store.js";
import type { runsAction, runsShowAction } from "../actions/runs.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/runs.js");

/** Runs shown when neither --limit nor --since is given (a period lists all its runs, so its totals are the period's). */
const DEFAULT_LIMIT = 20;

/** `bulkcheck runs` and `bulkcheck runs show RUN_ID`. Tests pass their own `act`/`show` to see what the flags parse into. */
export function runsCommand(
  invoke: Invoke,
  act: typeof runsAction = async (...args) => (await actions()).runsAction(...args),
  show: typeof runsShowAction = async (...args) => (await actions()).runsShowAction(...args),
) {
  const command = new Command("runs")
    .description(
      "list the runs of submit of this service and profile (--all: of every one), newest first: what each kept, reused from the ledger, uploaded and cost, and their totals",
    )
    .option("--all", "list the runs of every service (base URL) and profile")
    .addOption(new Option("--state <state>", "only runs in this state").choices(RUN_STATES))
    .option("--since <age|date>", "only runs started within this age (30d, 12h), or since this ISO date or time (2026-11-01)", parseSince)
    .option("--limit <n>", `show at most the n most recent runs (default ${DEFAULT_LIMIT}; with --since, all of the period's)`, parseCount)
    .addHelpText(
      "after",
      examples([
        "bulkcheck runs",
        "bulkcheck runs --all --since 30d",
        "bulkcheck runs --state failed",
        "bulkcheck runs --since 2026-11-01 --json --query totals.charged_micros",
        "bulkcheck runs show 20261127-020001-3fa9c1",
      ]),
    )
    .action((options, cmd) =>
      invoke(cmd, (ctx) => act(ctx, { ...options, limit: options.limit ?? (options.since === undefined ? DEFAULT_LIMIT : undefined) })),
    );
  command.addCommand(
    new Command("show")
      .description("show one run and its tasks")
      .argument("<run-id>", "a run id, or the start of one")
      .addHelpText("after", examples(["bulkcheck runs show 20261127-020001-3fa9c1", "bulkcheck runs show 20261127-020001-3fa9c1 --json"]))
      .action((id, _options, cmd) => invoke(cmd, (ctx) => show(ctx, id))),
  );
  return command;
}
