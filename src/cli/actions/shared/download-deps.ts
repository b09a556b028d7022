import { recorderFor, withheldFor } from "../../../ledger/record.js";
import { ResultRecording } from "../../../ledger/recording.js";
import { taskOrigins } from "../../../tasks/origins.js";
import type { DownloadDeps } from "../../../tasks/download.js";
import type { Context } from "../../context.js";
import { brokeOff, notPublished } from "../../views/output-events.js";
import { noteEachCheck } from "./seen-tasks.js";

/**
 * What downloading needs: the client, the store's knowledge of the tasks, the ledger's
 * recorder (unless the ledger is off: every download records what it reads), the numbers
 * forgotten since a task was given them (left out whether the ledger is on or off), the clock,
 * Ctrl-C, and a note when a transfer restarts or waits.
 */
export async function downloadDeps(ctx: Context, flags: { ledger?: boolean } = {}): Promise<DownloadDeps> {
  const [store, scope, ledger, location] = await Promise.all([ctx.store(), ctx.scope(), ctx.ledgerSettings(), ctx.storeLocation()]);
  const recording = resultRecording(ctx, location);
  return {
    client: async () => {
      const client = await ctx.client();
      // A download of a task the store thought unfinished ends its reservation there (see noteSeen).
      return { checkTask: noteEachCheck(ctx, (id) => client.checkTask(id)), openResult: client.openResult.bind(client) };
    },
    origins: (ids) => taskOrigins(store, scope, ids),
    ...(ledger.on && flags.ledger !== false ? { recorder: recorderFor(store, scope, ctx.now, recording), recording } : {}),
    withheld: withheldFor(store, scope),
    sleep: ctx.sleep,
    signal: ctx.signal,
    onRestart: (error) => ctx.printer.note(brokeOff(error)),
    onWait: (taskId, ms) => ctx.printer.note(notPublished(taskId, ms)),
    onWarning: (text) => ctx.printer.warn(text),
  };
}

/** Where a command's results go into the ledger: a worker with its own connection to the store at `location` (as configured). */
export function resultRecording(ctx: Context, location: string): ResultRecording {
  return new ResultRecording({ location, env: ctx.env, now: ctx.now, signal: ctx.signal });
}
