import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * Whether this process is in the foreground of its terminal: its process group
 * is the terminal's foreground group. A job started with `&` (or sent to the
 * background with Ctrl-Z, bg) is not, and must not write into the shell the user
 * is typing in. Node has no tcgetpgrp(); Linux gives both numbers in
 * /proc/self/stat, and elsewhere `ps` does. Without a terminal: false.
 */
export function inForeground(): boolean {
  const groups = fromProc() ?? fromPs();
  return groups !== undefined && groups.terminal > 0 && groups.own === groups.terminal;
}

interface Groups {
  own: number;
  terminal: number;
}

/** Fields 5 (pgrp) and 8 (tpgid) of /proc/self/stat, counted after the command name, which may hold spaces. */
function fromProc(): Groups | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { own: Number(fields[2]), terminal: Number(fields[5]) };
  } catch {
    return undefined;
  }
}

function fromPs(): Groups | undefined {
  try {
    const [own, terminal] = execFileSync("ps", ["-o", "pgid=,tpgid=", "-p", String(process.pid)], { encoding: "utf8" })
      .trim()
      .split(/\s+/)
      .map(Number);
    return own === undefined || terminal === undefined ? undefined : { own, terminal };
  } catch {
    return undefined;
  }
}
