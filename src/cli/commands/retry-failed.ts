import type { Context } from "../context.js";
export async function retryFailedCommand(ctx: Context, id: string, flags: object): Promise<void> {
  void ctx; void id; void flags;
}
