import { UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { sandboxOptionsFromFlags, type SandboxFlags } from "./shared/sandbox-options.js";
import { startSandbox } from "../../sandbox/index.js";
import { inForeground } from "../foreground.js";
import { openRequestLog } from "./shared/sandbox-log.js";

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
