import type { Context } from "../../context.js";

/** The command this run was started with, quoted so that it can be pasted into a shell to run it again. */
export function sameCommand(ctx: Pick<Context, "argv">): string {
  return ["bulkcheck", ...ctx.argv].map(shellQuoted).join(" ");
}

function shellQuoted(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}
