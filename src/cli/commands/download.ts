import type { Context } from "../context.js";
import { downloadTasks, type DownloadFlags } from "../download-flow.js";
import { readIds } from "../read-ids.js";

export async function downloadCommand(ctx: Context, ids: string[], flags: DownloadFlags & { join?: string }): Promise<void> {
  const taskIds = await readIds(ctx, ids);
  await downloadTasks(ctx, taskIds, flags);
}
