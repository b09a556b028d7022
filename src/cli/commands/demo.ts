import type { Context } from "../context.js";
export async function demoCommand(ctx: Context, flags: { dir?: string }): Promise<void> {
  void ctx; void flags;
}
