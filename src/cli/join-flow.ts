import type { Context } from "./context.js";

export interface JoinFlags {
  join: string;
  output?: string;
  force?: boolean;
}

export async function joinTasks(ctx: Context, ids: readonly string[], flags: JoinFlags): Promise<void> {
  void ctx;
  void ids;
  void flags;
  throw new Error("join: not built yet");
}
