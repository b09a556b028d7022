import { accessSync, constants, lstatSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { UsageError } from "../../../errors.js";
import { DestinationNotReplaceableError, isReplaceable } from "../../../results/errors.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";

/** Where output goes: `-` or nothing is stdout, anything else a file written atomically. */
export function isStdout(output: string | undefined): output is "-" | undefined {
  return output === undefined || output === "-";
}

/**
 * Refuses, before any request, an -o FILE that exists (without --force), that
 * --force may not replace (a directory, device, FIFO or socket), or whose
 * directory does not exist or is not writable: found after an upload and a wait,
 * any of them would have cost money for nothing.
 */
export function checkDestination(ctx: Pick<Context, "cwd">, output: string | undefined, force: boolean | undefined): void {
  if (isStdout(output)) return;
  const path = absolutePath(ctx, output);
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`${output} is a directory; bulkcheck writes a file there.`, {
      hint: `Give a file path, such as ${join(output, "results.csv")}.`,
    });
  }
  const existing = lstatSync(path, { throwIfNoEntry: false });
  if (existing && !force) {
    throw new UsageError(`${output} already exists.`, { hint: "Choose another path, or pass --force to replace it." });
  }
  if (existing && !isReplaceable(existing)) throw new DestinationNotReplaceableError(output, existing);
  checkWritableDirectory(ctx, output);
}

/**
 * Refuses a file path whose directory does not exist or cannot be written
 * (`access(W_OK)`: for root, only a read-only file system says no).
 */
export function checkWritableDirectory(ctx: Pick<Context, "cwd">, output: string): void {
  const dir = dirname(absolutePath(ctx, output));
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`Cannot write ${output}: the directory ${dir} does not exist.`, {
      hint: "Create it first, or choose another path.",
    });
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new UsageError(`Cannot write ${output}: the directory ${dir} is not writable (${(error as NodeJS.ErrnoException).code}).`, {
      hint: "Choose a writable directory, or change its permissions.",
      cause: error,
    });
  }
}
