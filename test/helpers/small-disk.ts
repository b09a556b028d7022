import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";

export interface SmallDisk {
  dir: string;
  /** Unmounts it (idempotent); what was written there goes with it. */
  remove(): void;
}

/**
 * A real full disk: a tmpfs of `kib` KiB mounted on `dir`, so a write that goes
 * past it fails with ENOSPC as on a disk that filled up. Only root may mount; on
 * other systems (or where mounting is not allowed) it is undefined and the test
 * skips.
 */
export function mountSmallDisk(dir: string, kib: number): SmallDisk | undefined {
  if (process.getuid?.() !== 0) return undefined;
  mkdirSync(dir, { recursive: true });
  if (spawnSync("mount", ["-t", "tmpfs", "-o", `size=${kib}k,mode=0755`, "tmpfs", dir]).status !== 0) return undefined;
  let mounted = true;
  return {
    dir,
    remove() {
      if (mounted) spawnSync("umount", [dir]);
      mounted = false;
    },
  };
}
