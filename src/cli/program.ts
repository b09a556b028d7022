import { Command, Option, type CommandUnknownOpts } from "./commander.js";
import type { Context, Runtime } from "./context.js";
import { exitCodesHelp } from "./exit-codes.js";
import { InvalidFlag, parseCount, parseSeconds, parseUsd } from "./parse-flags.js";

/** Runs a command module, loaded only when that command is invoked so start-up stays fast. */
export type Invoke = (cmd: CommandUnknownOpts, run: (ctx: Context) => Promise<void>) => Promise<void>;

/**
 * The command tree: names, flags, help and examples. Command modules under
 * ./commands are imported lazily inside each action.
 */
export function buildProgram(runtime: Runtime, invoke: Invoke, version: string) {
  const program = new Command("bulkcheck")
    .description("Check phone lists in bulk with the checking service: prepare, submit, wait, download, join.")
    .version(version, "-V, --version")
    .option("--json", "print machine-readable JSON on stdout")
    .option("-q, --quiet", "print only data and errors")
    .option("--no-color", "never colour output (NO_COLOR is honoured too)")
    .option("--base-url <url>", "service base URL (overrides BULKCHECK_BASE_URL and the profile)")
    .option("--profile <name>", "config profile (default: BULKCHECK_PROFILE or \"default\")")
    .option("--verbose", "log each request on stderr (keys redacted) and show stack traces")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText("after", `\nThe API key is read from BULKCHECK_API_KEY or the profile (bulkcheck config set api-key).\n\n${exitCodesHelp()}\n`);

  program
    .command("submit")
    .description("prepare a list locally and submit it as one or more tasks")
    .argument("<file>", "list to check (.txt, .csv, .tsv), or - for stdin")
    .requiredOption("--type <service_type>", "product: number_validation_batch, number_activity_batch, number_high_value_batch, number_ecommerce_batch, carrier_batch")
    .option("--country <CC>", "ISO 3166-1 country of the numbers (optional only for carrier_batch)")
    .option("--column <name|index>", "phone column of a CSV (name, or 1-based index)")
    .option("--require-country-code", "exclude numbers written without their country code, as the service does")
    .option("--strict-region", "exclude regions that only share the calling code (e.g. GG/JE/IM for GB)")
    .option("--rejects <file>", "write every excluded row to this CSV")
    .option("--threads <n>", THREADS_HELP, parseCountOrZero)
    .option("--idempotency-key <key>", "use this key instead of the one derived from the list")
    .option("--resubmit", "force a new task for a list already submitted")
    .option("--dry-run", "prepare and show the plan and cost; upload nothing")
    .option("-y, --yes", "do not ask for confirmation on a terminal")
    .option("--max-cost <usd>", "stop if the reservation would exceed this many USD", parseUsd)
    .option("--wait", "wait for the tasks to finish")
    .option("--interval <sec>", "seconds between checks while waiting (min 30 unless the service is local)", parseSeconds)
    .option("--timeout <sec>", "give up waiting after this many seconds (exit 8)", parseSeconds)
    .option("-o, --output <file>", "with --wait: download the results here (- for stdout)")
    .option("--join", "with --wait -o: write the source rows with the result columns beside them")
    .addOption(formatOption())
    .option("--force", "overwrite the output file")
    .addHelpText("after", examples([
      "bulkcheck submit list.csv --type carrier_batch --country GB",
      "ID=$(bulkcheck submit list.txt --type number_validation_batch --country GB --yes)",
      "bulkcheck submit crm.csv --type number_activity_batch --country GB --wait --join -o checked.csv",
    ]))
    .action((file, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/submit.js")).submitCommand(ctx, file, opts)));

  program
    .command("status")
    .description("show tasks (default: the most recent ones from the local journal)")
    .argument("[ids...]", "task ids")
    .option("--limit <n>", "how many recent tasks to show without ids", parseCount, 10)
    .addHelpText("after", examples(["bulkcheck status", "bulkcheck status 3f2a... --json | jq .status"]))
    .action((ids, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/status.js")).statusCommand(ctx, ids, opts)));

  program
    .command("wait")
    .description("wait until tasks finish (exit 0 all succeeded, 6 one failed, 8 timed out)")
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .option("--interval <sec>", "seconds between checks (min 30 unless the service is local)", parseSeconds)
    .option("--timeout <sec>", "give up after this many seconds (exit 8)", parseSeconds)
    .addHelpText("after", examples(["bulkcheck wait $ID --timeout 3600", "bulkcheck submit list.txt --type carrier_batch --yes | bulkcheck wait -"]))
    .action((ids, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/wait.js")).waitCommand(ctx, ids, opts)));

  program
    .command("download")
    .description("download results (always with the spec's header row); several ids are merged")
    .argument("<ids...>", "task ids, or - to read them from stdin")
    .option("-o, --output <file>", "destination file, or - for stdout (default: stdout)")
    .option("--force", "overwrite an existing file")
    .addOption(formatOption())
    .option("--join <source>", "write the source file's rows with the result columns beside them")
    .option("--strict", "exit 1 when the row count disagrees with the task's success_cnt")
    .addHelpText("after", examples(["bulkcheck download $ID -o results.csv", "bulkcheck download $ID --join crm.csv -o crm-checked.csv", "bulkcheck download $ID --format jsonl | jq ."]))
    .action((ids, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/download.js")).downloadCommand(ctx, ids, opts)));

  program
    .command("balance")
    .description("show the account balance")
    .addHelpText("after", examples(["bulkcheck balance", "bulkcheck balance --json | jq .balance_micros"]))
    .action((opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/balance.js")).balanceCommand(ctx)));

  program
    .command("validate")
    .description("prepare a list locally (no network, no key): summary, upload list, rejects")
    .argument("<file>", "list to check (.txt, .csv, .tsv), or - for stdin")
    .option("--country <CC>", "ISO 3166-1 country of the numbers")
    .option("--type <service_type>", "product (carrier_batch allows no --country)")
    .option("--column <name|index>", "phone column of a CSV (name, or 1-based index)")
    .option("--require-country-code", "exclude numbers written without their country code")
    .option("--strict-region", "exclude regions that only share the calling code")
    .option("-o, --output <file>", "write the normalised upload list here (- for stdout)")
    .option("--rejects <file>", "write every excluded row to this CSV")
    .option("--threads <n>", THREADS_HELP, parseCountOrZero)
    .option("--force", "overwrite output files")
    .addHelpText("after", examples(["bulkcheck validate crm.csv --country GB -o upload.txt --rejects rejects.csv", "bulkcheck validate list.txt --country GB --json"]))
    .action((file, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/validate.js")).validateCommand(ctx, file, opts)));

  program
    .command("retry-failed")
    .description("submit a new task with the numbers of a task that got no result")
    .argument("<id>", "task id")
    .option("-y, --yes", "do not ask for confirmation on a terminal")
    .option("--resubmit", "force a new task even if these numbers were already retried")
    .option("--dry-run", "show what would be submitted")
    .option("--max-cost <usd>", "stop if the reservation would exceed this many USD", parseUsd)
    .option("--wait", "wait for the new task to finish")
    .option("--interval <sec>", "seconds between checks while waiting", parseSeconds)
    .option("--timeout <sec>", "give up waiting after this many seconds (exit 8)", parseSeconds)
    .option("-o, --output <file>", "with --wait: download the results here")
    .option("--force", "overwrite the output file")
    .addHelpText("after", examples(["bulkcheck retry-failed $ID --yes", "bulkcheck retry-failed $ID --wait -o retried.csv"]))
    .action((id, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/retry-failed.js")).retryFailedCommand(ctx, id, opts)));

  const config = program
    .command("config")
    .description("manage settings and the API key (per profile)")
    .addHelpText("after", examples(["bulkcheck config set api-key", "bulkcheck config list --profile prod", "bulkcheck config path"]));
  config
    .command("set")
    .description("set a setting; for api-key the value comes from a hidden prompt or stdin")
    .argument("<key>", "api-key, base-url, min-task-size, max-task-size, max-file-bytes, max-in-flight, price.<product>")
    .argument("[value]", "the value (api-key: omit, or - to read stdin)")
    .addHelpText("after", examples(["bulkcheck config set api-key", "echo \"$KEY\" | bulkcheck config set api-key -", "bulkcheck config set base-url https://api.example.com", "bulkcheck config set max-task-size 100000 --profile prod"]))
    .action((key, value, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/config.js")).configSet(ctx, key, value)));
  config
    .command("get")
    .argument("<key>")
    .description("print a setting (the API key redacted)")
    .addHelpText("after", examples(["bulkcheck config get base-url", "bulkcheck config get api-key --json"]))
    .action((key, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/config.js")).configGet(ctx, key)));
  config
    .command("list")
    .description("list the profile's settings and where each comes from (the API key redacted)")
    .addHelpText("after", examples(["bulkcheck config list", "bulkcheck config list --profile prod --json"]))
    .action((opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/config.js")).configList(ctx)));
  config
    .command("unset")
    .argument("<key>")
    .description("remove a setting from the profile")
    .addHelpText("after", examples(["bulkcheck config unset api-key --profile old"]))
    .action((key, opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/config.js")).configUnset(ctx, key)));
  config
    .command("path")
    .description("print the config file's path")
    .addHelpText("after", examples(["bulkcheck config path"]))
    .action((opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/config.js")).configPath(ctx)));

  program
    .command("sandbox")
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
    .option("--url-ttl <sec>", "seconds a result_url stays valid", parseSeconds)
    .option("--result-delay <sec>", "seconds result_url stays absent after success", parseSeconds)
    .option("--fail-rate <share>", "share of tasks that end failed (0..1)", parseShare)
    .option("--result-miss-rate <share>", "share of numbers that get no result (0..1)", parseShare)
    .option("--chaos <share>", "share of requests answered with a fault (0..1)", parseShare)
    .option("--chaos-faults <list>", "faults chaos draws from, e.g. 42901,50303,drop (default: all)")
    .option("--retry-after <sec>", "Retry-After sent with 42901 and 50303", parseSeconds)
    .option("--seed <n>", "makes chaos and results reproducible", parseCountOrZero)
    .option("--prices <list>", "per-product micros, e.g. carrier_batch=1500,number_activity_batch=2000")
    .option("--separate-result-origin", "serve result files from a second port, like a CDN")
    .addHelpText("after", examples(["bulkcheck sandbox --port 8787 --api-key k", "bulkcheck sandbox --json --chaos 0.3 --seed 7"]))
    .action((opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/sandbox.js")).sandboxCommand(ctx, opts)));

  program
    .command("demo")
    .description("run the whole flow on a bundled sample list against an in-process sandbox")
    .option("--dir <dir>", "where to write the demo's files (default: a new temp directory)")
    .addHelpText("after", examples(["bulkcheck demo", "bulkcheck demo --dir ./demo-output"]))
    .action((opts, cmd) => invoke(cmd, async (ctx) => (await import("./commands/demo.js")).demoCommand(ctx, opts)));

  configureErrors(program, runtime);
  return program;
}

function formatOption() {
  return new Option("--format <format>", "output format (default csv; jsonl with --json on stdout)").choices(["csv", "tsv", "jsonl", "json", "table"] as const);
}

function examples(lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}\n`;
}

function configureErrors(program: CommandUnknownOpts, runtime: Runtime): void {
  const apply = (cmd: CommandUnknownOpts) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (text) => runtime.io.stdout.write(text),
      writeErr: (text) => runtime.io.stderr.write(text),
    });
    for (const sub of cmd.commands) apply(sub);
  };
  apply(program);
}

const THREADS_HELP = "classify on this many worker threads (default 0: in this thread; 30–65 MB each, worth it only for lists that need the full parse)";

function parseCountOrZero(value: string): number {
  return value === "0" ? 0 : parseCount(value);
}

function parseShare(value: string): number {
  const share = Number(value);
  if (!Number.isFinite(share) || share < 0 || share > 1) throw new InvalidFlag(`expected a share between 0 and 1, got "${value}"`);
  return share;
}
