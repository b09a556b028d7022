import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { checkDestination, listBeingRead } from "../../src/results/atomic-file.js";
import { DestinationExistsError, DestinationIsSourceError, DestinationNotReplaceableError } from "../../src/results/errors.js";
import { tempDir } from "../helpers/cli.js";

/** Above any pid_max: the pid of a writer that is no longer running. */
const DEAD_PID = 2 ** 30;

describe("checkDestination", () => {
  it("allows a new file in a writable directory, and says nothing stands there", async () => {
    const dir = tempDir();
    await expect(checkDestination(join(dir, "out.csv"))).resolves.toEqual({
      existing: undefined,
      staleTempFilesRemoved: [],
      discards: false,
    });
  });

  it("writes /dev/null in place, without --force, but never when it is the list being read", async () => {
    await expect(checkDestination("/dev/null")).resolves.toMatchObject({ discards: true });
    await expect(checkDestination("/dev/null", { reading: [listBeingRead("/dev/null")] })).rejects.toBeInstanceOf(DestinationIsSourceError);
  });

  it("refuses another device, even without force, naming the flag that gave it in the hint", async () => {
    const check = checkDestination("/dev/full", { flag: "--changes" });
    await expect(check).rejects.toBeInstanceOf(DestinationNotReplaceableError);
    await expect(check).rejects.toMatchObject({
      hint: "Give --changes the path of a file; to write into a pipe or device, use --changes - and redirect stdout.",
    });
  });

  it.each([
    ["by its own name", (list: string) => list, undefined],
    ["through a hard link", (list: string, dir: string) => (linkSync(list, join(dir, "hard.csv")), join(dir, "hard.csv")), "list"],
    ["through a symbolic link", (list: string, dir: string) => (symlinkSync(list, join(dir, "soft.csv")), join(dir, "soft.csv")), "list"],
  ])("refuses the list being read %s, even with force", async (_how, destinationOf, otherName) => {
    const dir = tempDir();
    const list = join(dir, "list.csv");
    writeFileSync(list, "phone\n");
    const check = checkDestination(destinationOf(list, dir), {
      force: true,
      reading: [listBeingRead(join(dir, "missing.csv")), listBeingRead(list)],
    });
    await expect(check).rejects.toBeInstanceOf(DestinationIsSourceError);
    await expect(check).rejects.toMatchObject({ otherName: otherName && list });
  });

  it("refuses, even with force, a file in a directory being read (by its path, through a link, or a hard link to a file in it), and a missing file by its name", async () => {
    const dir = tempDir();
    const staging = join(dir, "staging");
    mkdirSync(join(staging, "run"), { recursive: true });
    writeFileSync(join(staging, "run", "part-1.result"), "x");
    symlinkSync(join(staging, "run"), join(dir, "run-link"));
    linkSync(join(staging, "run", "part-1.result"), join(dir, "hard.result"));
    const reading = [
      { path: staging, role: "in the staging directory", tree: true },
      { path: join(dir, "store.db-wal"), role: "part of the store" },
    ];
    for (const name of [join("staging", "run", "new.csv"), join("run-link", "new.csv"), "hard.result", "store.db-wal"]) {
      const check = checkDestination(join(dir, name), { force: true, reading, name });
      await expect(check).rejects.toBeInstanceOf(DestinationIsSourceError);
    }
    await expect(checkDestination(join(dir, "hard.result"), { force: true, reading, name: "hard.result" })).rejects.toThrow(
      `hard.result is in the staging directory (${staging}); bulkcheck never writes over its input.`,
    );
    await expect(checkDestination(join(dir, "out.csv"), { force: true, reading })).resolves.toMatchObject({ existing: undefined });
  });

  it("lets force replace a symbolic link to another file, or one that points nowhere, and keeps what the link points to out of it", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "target.csv"), "target\n");
    symlinkSync(join(dir, "target.csv"), join(dir, "link.csv"));
    symlinkSync(join(dir, "nowhere.csv"), join(dir, "dangling.csv"));
    for (const name of ["link.csv", "dangling.csv"]) {
      await expect(checkDestination(join(dir, name))).rejects.toBeInstanceOf(DestinationExistsError);
      const { existing } = await checkDestination(join(dir, name), { force: true });
      expect(existing?.isSymbolicLink()).toBe(true);
    }
  });

  it("refuses a directory (or a link to one) with or without force, and a FIFO with force", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "sub"));
    symlinkSync(join(dir, "sub"), join(dir, "sub-link"));
    execFileSync("mkfifo", [join(dir, "fifo")]);
    for (const name of ["sub", "sub-link"]) {
      await expect(checkDestination(join(dir, name), { force: true, name })).rejects.toThrow(`${name} is a directory`);
    }
    await expect(checkDestination(join(dir, "fifo"), { force: true })).rejects.toBeInstanceOf(DestinationNotReplaceableError);
  });

  it("refuses a path whose directory does not exist, naming it as it was given", async () => {
    const dir = tempDir();
    const check = checkDestination(join(dir, "missing", "out.csv"), { name: "missing/out.csv" });
    await expect(check).rejects.toBeInstanceOf(UsageError);
    await expect(check).rejects.toThrow(`Cannot write missing/out.csv: the directory ${join(dir, "missing")} does not exist.`);
  });

  it("removes what dead writers left for the path before refusing a file that exists, and keeps everything else", async () => {
    const dir = tempDir();
    const stale = [`.out.csv.bulkcheck-${DEAD_PID}-0a1b2c.tmp`, `.out.csv.bulkcheck-${DEAD_PID}-0a1b2d.zip.tmp`];
    const kept = [`.out.csv.bulkcheck-${process.pid}-0a1b2c.tmp`, `.other.csv.bulkcheck-${DEAD_PID}-0a1b2c.tmp`, "out.csv"];
    for (const name of [...stale, ...kept]) writeFileSync(join(dir, name), "x");
    await expect(checkDestination(join(dir, "out.csv"))).rejects.toBeInstanceOf(DestinationExistsError);
    expect(readdirSync(dir).sort()).toEqual([...kept].sort());
  });
});
