import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AtomicFile } from "../../src/results/atomic-file.js";
import { asOutputWriteError, FileSystemError } from "../../src/file-system-errors.js";
import { DestinationNotReplaceableError } from "../../src/results/errors.js";
import { TempFiles } from "../../src/results/temp-files.js";
import { tempDir } from "../helpers/cli.js";

async function write(file: AtomicFile, text: string): Promise<void> {
  file.stream.end(text);
  await once(file.stream, "finish");
}

describe("AtomicFile", () => {
  it("with force keeps the mode of the file it replaces, and sets an asked-for mode exactly", async () => {
    const dir = tempDir();
    const path = join(dir, "results.csv");
    writeFileSync(path, "old\n");
    chmodSync(path, 0o640);
    const replacing = await AtomicFile.create(path, { force: true, temps: new TempFiles() });
    await write(replacing, "new\n");
    await replacing.commit();
    expect(readFileSync(path, "utf8")).toBe("new\n");
    expect(statSync(path).mode & 0o777).toBe(0o640);

    const staged = await AtomicFile.create(join(dir, "staged"), { temps: new TempFiles(), mode: 0o600 });
    expect(statSync(staged.tempPath).mode & 0o777).toBe(0o600);
    await write(staged, "x\n");
    await staged.commit();
    expect(statSync(join(dir, "staged")).mode & 0o777).toBe(0o600);
  });

  it("refuses, at commit, a FIFO that took the file's place during the write, and leaves it and no temp file", async () => {
    const dir = tempDir();
    const path = join(dir, "results.csv");
    writeFileSync(path, "old\n");
    const file = await AtomicFile.create(path, { force: true, temps: new TempFiles() });
    await write(file, "new\n");
    rmSync(path);
    execFileSync("mkfifo", [path]);
    await expect(file.commit()).rejects.toBeInstanceOf(DestinationNotReplaceableError);
    await file.discard();
    expect(lstatSync(path).isFIFO()).toBe(true);
    expect(readdirSync(dir)).toEqual(["results.csv"]);
  });

  it.each([
    ["ENOSPC", "no space left on the device"],
    ["EDQUOT", "the disk quota is used up"],
    ["EROFS", "the file system is read-only"],
    ["EACCES", "permission denied"],
  ])("reports the file system's %s as a rejected write (exit 3) naming the path", (code, reason) => {
    const error = asOutputWriteError(Object.assign(new Error("write failed"), { code }), "/data/out.csv");
    expect(error).toBeInstanceOf(FileSystemError);
    expect((error as FileSystemError).kind).toBe("input");
    expect((error as FileSystemError).message).toBe(`Cannot write /data/out.csv: ${reason} (${code}); nothing was written.`);
  });

  it("leaves other failures as they were", () => {
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(asOutputWriteError(reset, "/data/out.csv")).toBe(reset);
  });
});
