import { rm, stat } from "node:fs/promises";
import { removeResultRows } from "../results/remove-rows.js";
import { stagedFiles, type StagedFile } from "./staging.js";
import { identifierNumber } from "../store/result-values.js";
import type { Erasure, ErasureOptions, Store, TaskRecord } from "../store/store.js";
import { fileSha256 } from "../tasks/file-sha256.js";
import { removeStaleTemps } from "../temp-dir.js";

/**
 * Where an erasure reaches on this machine: every store holding results (the store in use
 * first; on a machine that uses a team's store, the local SQLite file too, which holds what
 * was checked before the switch) and the results unfinished runs staged under the state
 * directory (see stagedFiles), which a killed run leaves until the same command carries it on.
 */
export interface ErasureScope {
  stores: readonly Store[];
  stateDir: string;
}

/** What an erasure did (with dryRun: would do). */
export interface ErasureReport {
  /** Per store, in the order of the scope's stores. */
  stores: Array<Erasure & { location: string }>;
  /** Staged result files rewritten without the numbers' rows (forget) or removed (prune), and the rows forgotten in them. */
  staged: { files: number; rows?: number };
}

/**
 * Erases every result of these numbers (of `product` only, when given) from every store and
 * staged result in reach. A staged result is rewritten without their rows and its store
 * record given the new size and hash, so the run that staged it, carried on later, takes the
 * rewritten file as its own (it downloads a result again only when its staged copy is gone
 * or changed). Each store remembers the numbers, hashed, while a run open now could bring them
 * back (see Ledger.forget): carried on, such a run (or one fetching a result it had not staged
 * yet) never records them and writes them without a result. What earlier forgets remembered
 * for runs that have all ended since goes first. The upload files killed runs left in the temp
 * directory (which hold the numbers) go too; a run still running keeps its own until it ends.
 */
export async function forgetNumbers(
  scope: ErasureScope,
  identifiers: readonly string[],
  options: ErasureOptions & { product?: string },
): Promise<ErasureReport> {
  if (!options.dryRun) {
    await removeStaleTemps();
    for (const store of scope.stores) await store.ledger.dropSpentErasures();
  }
  const stores = await eachStore(scope, (store) => store.ledger.forget(identifiers, options));
  const numbers = new Set(identifiers.map(identifierNumber).filter((number) => number !== undefined));
  const staged = { files: 0, rows: 0 };
  for (const file of await stagedFiles(scope.stateDir)) {
    const tasks = await tasksOfRun(scope, file);
    // A run no store knows has no product to go by: only a forget of every product touches it.
    if (options.product !== undefined && tasks.product !== options.product) continue;
    const rows = await removeResultRows(file.path, numbers, options);
    if (rows === 0) continue;
    staged.files++;
    staged.rows += rows;
    if (options.dryRun) continue;
    const rewritten = { file: file.path, bytes: (await stat(file.path)).size, sha256: await fileSha256(file.path) };
    for (const { store, task } of tasks.all) if (task.staged?.file === file.path) await store.tasks.update(task.ref, { staged: rewritten });
  }
  return { stores, staged };
}

/**
 * Removes every result checked before `before` from every store and staged result in reach:
 * a staged result goes whole when its task was checked before then (or, for a file no store
 * knows, when it was downloaded before then). A run carried on later downloads it again if
 * the service still has it, to write its output.
 */
export async function pruneResults(scope: ErasureScope, before: string, options: ErasureOptions = {}): Promise<ErasureReport> {
  const stores = await eachStore(scope, (store) => store.ledger.prune(before, options));
  const staged = { files: 0 };
  for (const file of await stagedFiles(scope.stateDir)) {
    const { all } = await tasksOfRun(scope, file);
    const part = all.filter(({ task }) => task.part === file.part).sort((a, b) => b.task.ref - a.task.ref)[0];
    const checkedAt = part?.task.checkedAt ?? (await stat(file.path)).mtime.toISOString();
    if (checkedAt >= before) continue;
    staged.files++;
    if (!options.dryRun) await rm(file.path, { force: true });
  }
  return { stores, staged };
}

async function eachStore(scope: ErasureScope, erase: (store: Store) => Promise<Erasure>): Promise<ErasureReport["stores"]> {
  const erased: ErasureReport["stores"] = [];
  for (const store of scope.stores) erased.push({ location: store.location, ...(await erase(store)) });
  return erased;
}

/** The tasks every store in reach records for a staged file's run, and the run's product (from the first store that knows it). */
async function tasksOfRun(
  scope: ErasureScope,
  file: StagedFile,
): Promise<{ product?: string; all: Array<{ store: Store; task: TaskRecord }> }> {
  let product: string | undefined;
  const all: Array<{ store: Store; task: TaskRecord }> = [];
  for (const store of scope.stores) {
    const run = await store.runs.get(file.runId);
    if (run?.id !== file.runId) continue;
    product ??= run.product;
    for (const task of await store.tasks.ofRun(run.id)) all.push({ store, task });
  }
  return { ...(product === undefined ? {} : { product }), all };
}
