import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { UsageError } from "../../../errors.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";

/** Where output goes: `-` or nothing is stdout, anything else a file written atomically. */
export function isStdout(output: string | undefined): output is "-" | undefined {
  return output === undefined || output === "-";
}

/** Refuses, before any request, an -o FILE that is a directory, exists (without --force), or whose directory does not exist. */
export function checkDestination(ctx: Pick<Context, "cwd">, output: string | undefined, force: boolean | undefined): void {
  if (isStdout(output)) return;
  const path = absolutePath(ctx, output);
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`${output} is a directory; bulkcheck writes a file there.`, {
      hint: `Give a file path, such as ${join(output, "results.csv")}.`,
    });
  }
  if (!force && existsSync(path)) {
    throw new UsageError(`${output} already exists.`, { hint: "Choose another path, or pass --force to replace it." });
  }
  if (!statSync(dirname(path), { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`Cannot write ${output}: the directory ${dirname(path)} does not exist.`, {
      hint: "Create it first, or choose another path.",
    });
  }
}
