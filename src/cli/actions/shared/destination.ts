import { join } from "node:path";
import { configDir, stateDir } from "../../../config/paths.js";
import { CONFIG_FILE } from "../../../config/store.js";
import { UsageError } from "../../../errors.js";
import { checkDestination, checkNotRead, listBeingRead, NULL_DEVICE, type ReadFile } from "../../../results/atomic-file.js";
import { stagingRoot } from "../../../run/staging.js";
import { localStoreFiles } from "../../../store/location.js";
import type { Context } from "../../context.js";
import { absolutePath } from "../../paths.js";
import { isStdout } from "../../../outputs/output-files.js";

export { isStdout } from "../../../outputs/output-files.js";

/** The files a command writes, by the flag that names each (`-o`, `--rejects`, `--report`); `-` or nothing is not a file. */
export type Outputs = Readonly<Record<string, string | undefined>>;

export interface OutputRules {
  force?: boolean | undefined;
  /** The lists the command reads (the list, a join's source); `-` (stdin) or nothing is none. */
  reading?: ReadonlyArray<string | undefined>;
}

/**
 * Refuses, before anything is read, reserved or uploaded, every file of `outputs` that
 * checkDestination refuses (the list being read, bulkcheck's own files, a file that exists
 * without --force, a directory or device, a directory that is missing or not writable), and
 * two flags naming one file. Found after an upload and a wait, any of them would have cost
 * money for nothing; the atomic writer asks checkDestination again when it writes.
 */
export async function checkOutputs(ctx: OwnFilesContext, outputs: Outputs, rules: OutputRules): Promise<void> {
  const files = Object.entries(outputs).flatMap(([flag, output]) =>
    isStdout(output) ? [] : [{ flag, output, path: absolutePath(ctx, output) }],
  );
  if (files.length === 0) return;
  const lists = (rules.reading ?? []).flatMap((path) =>
    path === undefined || path === "-" ? [] : [listBeingRead(absolutePath(ctx, path))],
  );
  const reading = [...lists, ...(await bulkcheckFiles(ctx))];
  for (const [index, { flag, output, path }] of files.entries()) {
    // Any number of outputs may be thrown away.
    const twin = path === NULL_DEVICE ? undefined : files.slice(0, index).find((earlier) => earlier.path === path);
    if (twin) throw new UsageError(`${flag} and ${twin.flag} name the same file.`, { hint: `Give ${flag} a path of its own.` });
    // A report is a page of its own: --report takes no `-` (see checkReportFlags).
    await checkDestination(path, { force: Boolean(rules.force), reading, name: output, flag, takesStdout: flag !== "--report" });
  }
}

/** Refuses, before it is opened, a file that is appended to (the sandbox's --log) when it is one of bulkcheck's own files. */
export async function checkAppendedFile(ctx: OwnFilesContext, output: string): Promise<void> {
  await checkNotRead(absolutePath(ctx, output), await bulkcheckFiles(ctx), output);
}

type OwnFilesContext = Pick<Context, "cwd" | "env" | "storeLocation">;

/** What the messages say of the config and state directories: why nothing is written there. */
const KEPT_BY_BULKCHECK = "bulkcheck keeps its own files there and never writes an output among them";

/**
 * bulkcheck's own files on this machine, which no output may be under any name: the SQLite
 * store with the files SQLite keeps beside it (none for a team's PostgreSQL), the staging
 * directories of runs, the config file, and everything in the config and state directories
 * (BULKCHECK_CONFIG_DIR, or the XDG ones: the profiles with their API keys and webhook
 * secrets, the store, staging, a journal of 0.1 waiting to be adopted). An output written
 * over the store would lose every open run's keys, and carrying those runs on would upload
 * and pay again; over the config file, every profile's key and secret. A new file among
 * them is refused too: bulkcheck may read it later as one of its own.
 */
export async function bulkcheckFiles(ctx: OwnFilesContext): Promise<ReadFile[]> {
  const config = configDir(ctx.env);
  const state = stateDir(ctx.env);
  const directories: ReadFile[] = [
    { path: config, role: "in bulkcheck's config directory", tree: true, why: KEPT_BY_BULKCHECK },
    ...(state === config ? [] : [{ path: state, role: "in bulkcheck's state directory", tree: true, why: KEPT_BY_BULKCHECK }]),
  ];
  return [
    ...localStoreFiles(await ctx.storeLocation()).map((path) => ({ path, role: "part of bulkcheck's store" })),
    ...[true, false].map((ledger) => ({ path: stagingRoot(state, ledger), role: "in bulkcheck's staging directory", tree: true })),
    {
      path: join(config, CONFIG_FILE),
      role: "bulkcheck's config file",
      why: "it holds every profile's settings, API key and webhook secret, and bulkcheck never writes an output over it",
    },
    ...directories,
  ];
}
