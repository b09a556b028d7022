import { InputRejectedError } from "../errors.js";
import type { TaskOrigin } from "../tasks/origins.js";
import { recordedFingerprint, sourceChanges } from "../tasks/source-check.js";

export interface JoinSourceOptions {
  /** The file to join with (absolute path). */
  sourcePath: string;
  /** --force: join anyway, with a warning, when the file is another one or has changed. */
  acceptChanged: boolean;
  onWarning?: (text: string) => void;
}

/**
 * A join is right only with the list that was uploaded: rows are matched to
 * results by position in the prepared list, so a file exported again since the
 * submit marks every row `no_result` while its numbers were checked and charged.
 * Refuses (exit 3) another path than the journalled one, and a journalled file
 * whose content changed since the submit, unless `acceptChanged`.
 * @returns whether the file is the one submitted, unchanged (its journalled fingerprint matches).
 */
export async function checkJoinSource(origins: readonly TaskOrigin[], options: JoinSourceOptions): Promise<boolean> {
  const ids = origins.map(({ taskId }) => taskId);
  const other = origins.find(({ run }) => run?.source.path !== undefined && run.source.path !== options.sourcePath);
  if (other) {
    const submitted = other.run!.source.path!;
    return refuseOrWarn(
      options,
      ids,
      `task ${other.taskId} was submitted from ${submitted}, not ${options.sourcePath}`,
      `Join with ${submitted}, or`,
    );
  }
  const piped = origins.find(({ run }) => run !== undefined && run.kind !== "legacy" && run.source.path === undefined);
  if (piped) {
    return refuseOrWarn(
      options,
      ids,
      `task ${piped.taskId} was submitted from stdin, so nothing tells whether ${options.sourcePath} is the list that was piped`,
      "",
    );
  }
  const fingerprint = origins.map(({ run }) => run && recordedFingerprint(run.source)).find((found) => found !== undefined);
  if (!fingerprint) return false;
  const changes = await sourceChanges(fingerprint, options.sourcePath);
  if (changes.length > 0)
    return refuseOrWarn(options, ids, `source changed since submit: ${options.sourcePath} (${changes.join(", ")})`, "");
  return true;
}

/** Warns and returns false (the file is not the one submitted) with --force; refuses without. */
function refuseOrWarn(options: JoinSourceOptions, ids: readonly string[], what: string, alternative: string): false {
  if (options.acceptChanged) {
    options.onWarning?.(`${what}; joining anyway (--force): rows whose numbers differ are marked no_result.`);
    return false;
  }
  throw new InputRejectedError(`${what}. Its rows would not match the results, so nothing was written.`, {
    hint: `The results are there to download without the join: bulkcheck download ${ids.join(" ")} -o results.csv\n${alternative ? `${alternative} p` : "P"}ass --force to join with this file as it is.`,
  });
}
