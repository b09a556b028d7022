import { isAbsolute, resolve } from "node:path";
import type { Context } from "./context.js";

/** A path the user gave, taken from the command's working directory when relative. */
export function absolutePath(ctx: Pick<Context, "cwd">, path: string): string {
  return isAbsolute(path) ? path : resolve(ctx.cwd, path);
}
