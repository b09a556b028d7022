import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { checkAppendedFile } from "./destination.js";

export interface RequestLog {
  write: (line: string) => void;
  close: () => Promise<void>;
}

/** How often the log asks again whether the process is in the foreground (Ctrl-Z and bg move it). */
const FOREGROUND_RECHECK_MS = 1000;

/**
 * Where the sandbox's one line per request goes: appended to --log FILE (never one of
 * bulkcheck's own files, such as the store); else
 * to stderr, but only while stderr is a terminal and this process is in its
 * foreground, so a sandbox started with `&` never writes into the shell the
 * user is typing in (or over a spinner there); else nowhere.
 */
export async function openRequestLog(ctx: Context, path: string | undefined, inForeground: () => boolean): Promise<RequestLog> {
  if (path !== undefined) {
    await checkAppendedFile(ctx, path);
    const file = createWriteStream(absolutePath(ctx, path), { flags: "a" });
    await once(file, "open"); // rejects with the file's error (a directory, no permission): exit 2 before serving
    return {
      write: (line) => void file.write(`${line}\n`),
      close: () => new Promise<void>((resolve) => file.end(resolve)),
    };
  }
  let foreground = false;
  let checkedAt = -Infinity;
  return {
    write: (line) => {
      if (!ctx.io.stderr.isTTY) return;
      if (ctx.now() - checkedAt > FOREGROUND_RECHECK_MS) [foreground, checkedAt] = [inForeground(), ctx.now()];
      if (foreground) ctx.printer.note(line);
    },
    close: () => Promise.resolve(),
  };
}
