import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRunning } from "./results/temp-files.js";

/**
 * Runs `work` with a private temp directory that is removed afterwards, whatever
 * happens. The name carries the process id, so what a killed run (SIGKILL, power
 * loss) left behind — prepared upload files, that is the numbers themselves — is
 * recognised and removed by the next run.
 */
export async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  await removeStaleTemps();
  const dir = await mkdtemp(join(tmpdir(), `bulkcheck-${process.pid}-`));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `bulkcheck-{pid}-{random}`: a withTempDir directory, or the staged stdout output (`.out`) of an earlier version. */
const TEMP_NAME = /^bulkcheck-(\d+)-[0-9A-Za-z]+(\.out)?$/;

/**
 * Removes, from the OS temp directory, what bulkcheck processes that are no longer
 * running left there. Best effort: a name that cannot be removed (another user's
 * file) is left alone.
 */
export async function removeStaleTemps(dir = tmpdir()): Promise<void> {
  const names = await readdir(dir).catch(() => []);
  for (const name of names) {
    const match = TEMP_NAME.exec(name);
    if (!match || isRunning(Number(match[1]))) continue;
    await rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined);
  }
}
