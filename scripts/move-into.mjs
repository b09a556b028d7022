// How `npm run build` puts a new build in place without ever taking the old one away: the
// build is written into a staging directory beside it (dist/.next-<pid>), then each of its
// files is renamed over the file of the same path in dist/ (a rename onto an existing path
// replaces it in one step on POSIX file systems), and only then are the files the new build
// no longer has removed. So `bulkcheck` run from a clone keeps working while `npm test`
// rebuilds (dist/ used to be removed first, and every call failed for the minutes the build
// took): at any moment each file of the CLI is there, the old one or the new.
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/** Where a build in progress is staged inside `target`; other builds' stages are left alone. */
export const STAGE_PREFIX = ".next-";

/** A fresh staging directory for this process's build, inside `target` (so a rename never crosses file systems). */
export function stageFor(target) {
  mkdirSync(target, { recursive: true });
  removeDeadStages(target);
  const stage = join(target, `${STAGE_PREFIX}${process.pid}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage);
  return stage;
}

/**
 * Moves everything in `stage` into `target` (see the header), removes from `target` what
 * `stage` did not have (other builds' stages excepted), then `stage` itself.
 */
export function moveInto(stage, target) {
  const { dirs, files } = tree(stage);
  for (const dir of dirs) {
    const path = join(target, dir);
    if (existsSync(path) && !lstatSync(path).isDirectory()) rmSync(path, { force: true });
    mkdirSync(path, { recursive: true });
  }
  for (const file of files) {
    const path = join(target, file);
    if (existsSync(path) && lstatSync(path).isDirectory()) rmSync(path, { recursive: true, force: true });
    renameSync(join(stage, file), path);
  }
  const kept = new Set([...dirs, ...files]);
  const stale = tree(target, (name) => name.startsWith(STAGE_PREFIX));
  for (const path of [...stale.files, ...stale.dirs.reverse()]) {
    if (!kept.has(path)) rmSync(join(target, path), { recursive: true, force: true });
  }
  rmSync(stage, { recursive: true, force: true });
}

/** The directories (parents first) and other entries under `root`, as paths from it; `skipTop` leaves top-level names out. */
function tree(root, skipTop = () => false) {
  const dirs = [];
  const files = [];
  const walk = (relative) => {
    for (const entry of readdirSync(join(root, relative), { withFileTypes: true })) {
      if (relative === "" && skipTop(entry.name)) continue;
      const path = relative === "" ? entry.name : join(relative, entry.name);
      if (entry.isDirectory()) {
        dirs.push(path);
        walk(path);
      } else files.push(path);
    }
  };
  walk("");
  return { dirs, files };
}

/** Stages left by builds that were killed (their process is gone). */
function removeDeadStages(target) {
  for (const name of readdirSync(target)) {
    if (!name.startsWith(STAGE_PREFIX)) continue;
    const pid = Number(name.slice(STAGE_PREFIX.length));
    if (!Number.isInteger(pid) || !alive(pid)) rmSync(join(target, name), { recursive: true, force: true });
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}
