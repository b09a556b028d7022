import { UsageError } from "../../../errors.js";
import { checkDestination, NULL_DEVICE } from "../../../results/atomic-file.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";

/** Where output goes: `-` or nothing is stdout, anything else a file written atomically. */
export function isStdout(output: string | undefined): output is "-" | undefined {
  return output === undefined || output === "-";
}

/** The files a command writes, by the flag that names each (`-o`, `--rejects`, `--report`); `-` or nothing is not a file. */
export type Outputs = Readonly<Record<string, string | undefined>>;

export interface OutputRules {
  force?: boolean | undefined;
  /** The files the command reads (the list, a join's source); `-` (stdin) or nothing is none. */
  reading?: ReadonlyArray<string | undefined>;
}

/**
 * Refuses, before anything is read, reserved or uploaded, every file of `outputs` that
 * checkDestination refuses (the list being read, a file that exists without --force, a
 * directory or device, a directory that is missing or not writable), and two flags
 * naming one file. Found after an upload and a wait, any of them would have cost money
 * for nothing; the atomic writer asks checkDestination again when it writes.
 */
export async function checkOutputs(ctx: Pick<Context, "cwd">, outputs: Outputs, rules: OutputRules): Promise<void> {
  const files = Object.entries(outputs).flatMap(([flag, output]) =>
    isStdout(output) ? [] : [{ flag, output, path: absolutePath(ctx, output) }],
  );
  const reading = (rules.reading ?? []).flatMap((path) => (path === undefined || path === "-" ? [] : [absolutePath(ctx, path)]));
  for (const [index, { flag, output, path }] of files.entries()) {
    // Any number of outputs may be thrown away.
    const twin = path === NULL_DEVICE ? undefined : files.slice(0, index).find((earlier) => earlier.path === path);
    if (twin) throw new UsageError(`${flag} and ${twin.flag} name the same file.`, { hint: `Give ${flag} a path of its own.` });
    await checkDestination(path, { force: Boolean(rules.force), reading, name: output, flag });
  }
}
