import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, tempDir } from "../helpers/cli.js";
import { e2eSandboxes, listText, submitArgs, type E2e } from "../helpers/sandbox.js";
import { bulkcheckCommand } from "../helpers/terminal.js";

/** Lists given as pipes: a named pipe (FIFO) and process substitution's /dev/fd/N, read once. */
const sandbox = e2eSandboxes();

function fifo(e: E2e): string {
  const path = join(e.dir, "list.fifo");
  execFileSync("mkfifo", [path]);
  return path;
}

/** Opens the pipe's writing end as soon as a reader has it open (until then a non-blocking open fails with ENXIO). */
async function writerOnceRead(path: string): Promise<number> {
  for (;;) {
    try {
      return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENXIO") throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** A child's exit code and stderr once it has ended. */
async function ended(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, stderr };
}

describe("a list that is a pipe", () => {
  it("reads a named pipe once its writer comes, every row of it", async () => {
    const e = await sandbox({ fakeClock: false });
    const path = fifo(e);
    const run = e.spawn(submitArgs(path, "--dry-run"));
    // Opening for writing waits for the reader: this writes once bulkcheck has opened the pipe.
    await writeFile(path, listText(500));
    const out = await run.done;
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(/rows read\s+500/);
  });

  it("reads process substitution's /dev/fd/N (a pipe handed down as a file descriptor)", async () => {
    const e = await sandbox({ fakeClock: false });
    const child = spawn(process.execPath, [BIN, ...submitArgs("/dev/fd/3", "--dry-run")], {
      cwd: e.dir,
      env: { PATH: process.env.PATH, HOME: tempDir(), ...e.env },
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    });
    (child.stdio[3] as NodeJS.WritableStream).end(listText(500));
    const out = await ended(child);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(/rows read\s+500/);
  });

  it("reads bash's process substitution, <(cat list.txt)", async () => {
    const e = await sandbox({ fakeClock: false });
    e.file("list.txt", listText(500));
    const command = `${bulkcheckCommand(submitArgs("LIST", "--dry-run")).replace("'LIST'", "<(cat list.txt)")}`;
    const child = spawn("bash", ["-c", command], {
      cwd: e.dir,
      env: { PATH: process.env.PATH, HOME: tempDir(), ...e.env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const out = await ended(child);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toMatch(/rows read\s+500/);
  });

  it("gives up a named pipe that no one writes when --timeout runs out (exit 8), without saying it stopped requests it never made", async () => {
    const e = await sandbox({ fakeClock: false });
    const out = await e.bin(submitArgs(fifo(e), "--timeout", "2"));
    expect(out.code, out.stderr).toBe(8);
    expect(out.stderr).toContain("error: The --timeout of 2 s ran out.\n");
    expect(out.stderr).not.toContain("in flight");
    expect(e.state().tasks).toHaveLength(0);
  });

  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)("stops waiting for a named pipe's writer on %s (%i)", async (signal, code) => {
    const e = await sandbox({ fakeClock: false });
    const path = fifo(e);
    const run = e.spawn(submitArgs(path));
    // A writer that opens the pipe once bulkcheck reads it, and never writes.
    const writer = await writerOnceRead(path);
    try {
      run.child.kill(signal);
      const out = await run.done;
      expect(out.code, out.stderr).toBe(code);
    } finally {
      closeSync(writer);
    }
  });

  it("refuses a pipe as the list of --join (read again for the join) before any request, exit 2", async () => {
    const e = await sandbox({ fakeClock: false });
    const out = await e.bin(submitArgs(fifo(e), "--wait", "-o", "joined.csv", "--join"));
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain("is a pipe, which can be read only once; --join needs the list as a file it can read again.");
    expect(e.state().tasks).toHaveLength(0);
  });
});
