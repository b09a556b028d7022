import { Command, Option } from "../commander.js";
import type { Invoke } from "../context.js";
import { parseCount, parseCountOrZero, parsePositiveSeconds, parseSeconds, parseShare } from "../parse-flags.js";
import { DURATION_UNITS, examples } from "./shared/help.js";
import type { sandboxAction } from "../actions/sandbox.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/sandbox.js");

/** `bulkcheck sandbox`. Tests pass their own `act` to see what the flags parse into. */
export function sandboxCommand(invoke: Invoke, act: typeof sandboxAction = async (...args) => (await actions()).sandboxAction(...args)) {
  return new Command("sandbox")
    .description("run a local emulator of the whole service (free; for trying bulkcheck and testing scripts)")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port (0 = any free port)", parseCountOrZero, 0)
    .option("--api-key <key>", "key clients must send (generated if absent)")
    .option("--balance-micros <n>", "starting balance in micro-USD", parseCountOrZero)
    .option("--min-task-size <n>", "smallest accepted task", parseCount)
    .option("--max-task-size <n>", "largest accepted task", parseCount)
    .option("--max-file-bytes <n>", "largest accepted upload", parseCount)
    .option("--max-in-flight <n>", "concurrent submit requests per key", parseCount)
    .option("--max-unfinished <n>", "unfinished tasks per key before 42900", parseCount)
    .option("--numbers-per-second <n>", "processing speed", parseCount)
    .addOption(new Option("--result-format <format>", "result files as csv or zip").choices(["csv", "zip"] as const))
    .option("--url-ttl <sec>", `how long a result_url stays valid (${DURATION_UNITS})`, parsePositiveSeconds)
    .option("--result-delay <sec>", `how long result_url stays absent after success (whole seconds; ${DURATION_UNITS})`, parseSeconds)
    .option("--fail-rate <share>", "share of tasks that end failed (0..1)", parseShare)
    .option("--result-miss-rate <share>", "share of numbers that get no result (0..1)", parseShare)
    .option("--drift <share>", "share of numbers whose result differs from their usual one in each task (0..1; seeded)", parseShare)
    .option("--chaos <share>", "share of requests answered with a fault (0..1)", parseShare)
    .option("--chaos-faults <list>", "faults chaos draws from, e.g. 42901,50303,drop (default: all but endless-download)")
    .option("--retry-after <sec>", `Retry-After sent with 42901 and 50303 (whole seconds; ${DURATION_UNITS})`, parseSeconds)
    .option("--seed <n>", "makes chaos and results reproducible", parseCountOrZero)
    .option("--prices <list>", "per-product micros, e.g. carrier_batch=1500,number_activity_batch=2000")
    .option("--separate-result-origin", "serve result files from a second port, like a CDN")
    .option("--log <file>", "append one line per request to this file (default: stderr, only while in a terminal's foreground)")
    .addHelpText(
      "after",
      `\nWith --profile NAME, it first points that profile at itself: base-url, api-key,\nits task and upload limits (its smallest task is then 1, unless --min-task-size\nsays otherwise) and its prices, so bulkcheck --profile NAME submit ... works;\nand a webhook-secret when the profile has none.\n\nIts webhook receiver is BASE_URL/webhooks: --notify it, and GET it to list\nthe deliveries, each verified with the profile's webhook-secret.\n${examples(
        [
          "bulkcheck sandbox --port 8787 --profile sandbox &",
          "bulkcheck sandbox --port 8787 --api-key k",
          "bulkcheck sandbox --json --chaos 0.3 --seed 7",
        ],
      )}`,
    )
    .action((options, cmd) => invoke(cmd, (ctx) => act(ctx, options)));
}
