import { UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { downloadTasks, type DownloadFlags } from "../download-flow.js";
import { readIds } from "../read-ids.js";

export async function downloadCommand(ctx: Context, ids: string[], flags: DownloadFlags & { join?: string }): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  if (flags.join === undefined) {
    await downloadTasks(ctx, taskIds, flags);
    return;
  }
  if (flags.format !== undefined && flags.format !== "csv") {
    throw new UsageError("--join writes the source file's own format; drop --format.");
  }
  // The join re-reads the source with libphonenumber-js (~90 ms to load): only --join pays for it.
  const { joinTasks } = await import("../join-flow.js");
  await joinTasks(ctx, taskIds, { ...flags, join: flags.join });
}
