import { UsageError } from "../../errors.js";
import { Command, Option } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { parseCount, parseCountOrZero, parsePositiveSeconds, parseSeconds, parseShare } from "../parse-flags.js";
import { DURATION_UNITS, examples } from "./shared/help.js";
import type { SandboxFlags } from "./shared/sandbox-options.js";

/** `bulkcheck sandbox`. Tests pass their own `run` to see what the flags parse into. */
export function sandboxCommand(invoke: Invoke, run = sandboxRun) {
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
    .option("--chaos-faults <list>", "faults chaos draws from, e.g. 42901,50303,drop (default: all)")
    .option("--retry-after <sec>", `Retry-After sent with 42901 and 50303 (whole seconds; ${DURATION_UNITS})`, parseSeconds)
    .option("--seed <n>", "makes chaos and results reproducible", parseCountOrZero)
    .option("--prices <list>", "per-product micros, e.g. carrier_batch=1500,number_activity_batch=2000")
    .option("--separate-result-origin", "serve result files from a second port, like a CDN")
    .option("--log <file>", "append one line per request to this file (default: stderr, only while in a terminal's foreground)")
    .addHelpText("after", examples(["bulkcheck sandbox --port 8787 --api-key k", "bulkcheck sandbox --json --chaos 0.3 --seed 7"]))
    .action((options, cmd) => invoke(cmd, (ctx) => run(ctx, options)));
}

/** Why the sandbox could not listen, in the user's terms: a port in use or not allowed, or a host not on this machine. */
function listenError(flags: SandboxFlags, error: unknown): unknown {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case "EADDRINUSE":
      return new UsageError(`port ${flags.port} is in use (another sandbox?); pick --port or stop it`, {
        hint: "--port 0 picks any free port (the base URL is printed).",
        cause: error,
      });
    case "EACCES":
      return new UsageError(`port ${flags.port} needs privileges this user does not have; pick --port 1024 or above`, { cause: error });
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return new UsageError(`--host ${flags.host} is not an address of this machine; pick another --host`, {
        hint: "The default, 127.0.0.1, is reachable only from this machine.",
        cause: error,
      });
    default:
      return error;
  }
}

/**
 * Serves the emulator until Ctrl-C (or SIGTERM); the base URL and key go to
 * stderr, or to stdout as JSON, with how to stop it for the way it was started.
 */
export async function sandboxRun(ctx: Context, flags: SandboxFlags): Promise<void> {
  const { startSandbox } = await import("../../sandbox/index.js");
  const { sandboxOptionsFromFlags } = await import("./shared/sandbox-options.js");
  const { inForeground } = await import("../foreground.js");
  const { openRequestLog } = await import("./shared/sandbox-log.js");
  const requestLog = await openRequestLog(ctx, flags.log, inForeground);
  try {
    const sandbox = await startSandbox({ ...sandboxOptionsFromFlags(flags), log: requestLog.write }).catch((error: unknown) => {
      throw listenError(flags, error);
    });
    if (ctx.globals.json) {
      ctx.printer.json({ base_url: sandbox.url, api_key: sandbox.apiKey });
    } else {
      ctx.printer.note(`bulkcheck sandbox listening on ${sandbox.url}`);
      ctx.printer.note(`API key: ${sandbox.apiKey}`);
      ctx.printer.note(`Try it: export BULKCHECK_BASE_URL=${sandbox.url} BULKCHECK_API_KEY=${sandbox.apiKey}; bulkcheck balance`);
    }
    ctx.printer.note(inForeground() ? "Stop with Ctrl-C." : `Stop with: kill ${process.pid}`);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await sandbox.close();
  } finally {
    await requestLog.close();
  }
}
