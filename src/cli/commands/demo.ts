import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import type { DemoOptions, Main } from "../actions/demo.js";
import { examples } from "./shared/help.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/demo.js");

/**
 * `bulkcheck demo`, whose steps run the real commands through `main` (given, as main
 * builds this tree). Tests pass their own `act` to see what the flags parse into.
 */
export function demoCommand(
  invoke: Invoke,
  main: Main,
  act = async (ctx: Context, options: DemoOptions) => (await actions()).demoAction(ctx, options, main),
) {
  return new Command("demo")
    .description("run the whole flow on a bundled sample list against an in-process sandbox")
    .option("--dir <dir>", "where to write the demo's files (default: a new temp directory)")
    .addHelpText("after", examples(["bulkcheck demo", "bulkcheck demo --dir ./demo-output"]))
    .action((options, cmd) => invoke(cmd, (ctx) => act(ctx, options)));
}
