import { spawnSync } from "node:child_process";
import { linkSync, lstatSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mountSmallDisk } from "../helpers/small-disk.js";
import { crmText, e2eSandboxes, lines, listText, submitArgs, submittedIds, WAITING } from "../helpers/sandbox.js";

/**
 * Issue 18, points 1–5: no file lost or overwritten. One rule decides whether a path
 * may be written (never the list being read, never through a link, nothing existing
 * without --force), every output is written whole or not at all, and what a killed
 * writer left is removed by the next one. Real CLI against a real sandbox on 127.0.0.1.
 */
const sandbox = e2eSandboxes();

/** The temp files of writers (`.NAME.bulkcheck-PID-RANDOM[.zip].tmp`) in `dir`. */
function tempFiles(dir: string): string[] {
  return readdirSync(dir).filter((name) => /^\..+\.bulkcheck-\d+-[0-9a-f]+(\.[a-z]+)?\.tmp$/.test(name));
}

describe("an output is never the list being read (issue 18, points 1 and 2)", () => {
  it("submit big.csv --rejects big.csv stops before reading or uploading anything, with --force, --dry-run or --wait -o alike", async () => {
    const e = await sandbox();
    const list = e.file("big.csv", crmText(600));
    const before = readFileSync(list);
    const spawned = await e.bin(submitArgs("big.csv", "--rejects", "big.csv"));
    const others = await Promise.all(
      [["--force"], ["--dry-run", "--force"], ["--wait", "-o", "out.csv", "--force"]].map((extra) =>
        e.run(submitArgs("big.csv", "--rejects", "big.csv", ...extra)),
      ),
    );
    for (const out of [spawned, ...others]) {
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain("error: big.csv is the list being read; bulkcheck never writes over its input.");
      expect(out.stderr).not.toContain("Reading phone numbers");
    }
    expect(readFileSync(list).equals(before)).toBe(true);
    expect(e.state().stats.requests).toBe(0);
  });

  it("validate big.csv -o big.csv --force (or --rejects) refuses the list by its name, a hard link or a symbolic link to it", async () => {
    const e = await sandbox();
    const list = e.file("big.csv", crmText(600));
    linkSync(list, join(e.dir, "hard.csv"));
    symlinkSync(list, join(e.dir, "soft.csv"));
    const before = readFileSync(list);
    const runs = await Promise.all(
      [
        ["-o", "big.csv"],
        ["-o", "hard.csv"],
        ["--rejects", "big.csv"],
        ["--rejects", "soft.csv"],
      ].map(([flag, output]) =>
        e.bin(["validate", "big.csv", "--country", "GB", flag!, output!, "--force"]).then((out) => ({ out, output })),
      ),
    );
    for (const { out, output } of runs) {
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain(`error: ${output} is the list being read`);
      expect(out.stderr).not.toContain("Reading phone numbers");
    }
    expect(readFileSync(list).equals(before)).toBe(true);
    expect(lstatSync(join(e.dir, "soft.csv")).isSymbolicLink()).toBe(true);
  });

  it("submit s.csv --wait --join -o s.csv --force, and download --join s.csv -o s.csv --force, stop before any request", async () => {
    const e = await sandbox();
    const list = e.file("s.csv", crmText(600));
    const before = readFileSync(list);
    const submit = await e.bin(submitArgs("s.csv", "--wait", "--join", "-o", "s.csv", "--force"));
    expect(submit.code, submit.stderr).toBe(2);
    expect(submit.stderr).toContain("error: s.csv is the list being read");
    expect(e.state().stats.requests).toBe(0);

    const id = (await e.run(submitArgs("s.csv", "--quiet", "--wait"))).stdout.trim();
    const requests = e.state().stats.requests;
    const download = await e.run(["download", id, "--join", "s.csv", "-o", "s.csv", "--force"]);
    expect(download.code, download.stderr).toBe(2);
    expect(download.stderr).toContain("error: s.csv is the list being read");
    expect(e.state().stats.requests).toBe(requests);
    expect(readFileSync(list).equals(before)).toBe(true);
  });

  it("submit --dry-run --rejects FILE refuses a file that exists without --force (exit 2), and with --force replaces it whole", async () => {
    const e = await sandbox();
    e.file("list.csv", crmText(600));
    const precious = e.file("precious.csv", "precious\n");
    const refused = await e.bin(submitArgs("list.csv", "--dry-run", "--rejects", "precious.csv"));
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("error: precious.csv already exists.");
    expect(readFileSync(precious, "utf8")).toBe("precious\n");
    const forced = await e.run(submitArgs("list.csv", "--dry-run", "--rejects", "precious.csv", "--force"));
    expect(forced.code, forced.stderr).toBe(0);
    expect(lines(readFileSync(precious, "utf8"))).toHaveLength(601);
    expect(e.state().tasks).toEqual([]);
  });

  it("-o and --rejects naming one file are refused before anything is read", async () => {
    const e = await sandbox();
    e.file("list.csv", crmText(600));
    const out = await e.run(["validate", "list.csv", "--country", "GB", "-o", "out.csv", "--rejects", "./out.csv"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("error: --rejects and -o name the same file.");
    expect(readdirSync(e.dir)).toEqual(["list.csv"]);
  });
});

describe("--force replaces a symbolic link, never writes through it (issue 18, point 3)", () => {
  it("validate -o LINK --rejects LINK --force replaces each link with the file and leaves what it pointed to as it was", async () => {
    const e = await sandbox();
    e.file("list.csv", crmText(600));
    const targets = [e.file("target-upload.txt", "target\n"), e.file("target-rejects.csv", "target\n")];
    symlinkSync(targets[0]!, join(e.dir, "upload.txt"));
    symlinkSync(targets[1]!, join(e.dir, "rejects.csv"));
    const out = await e.bin(["validate", "list.csv", "--country", "GB", "-o", "upload.txt", "--rejects", "rejects.csv", "--force"]);
    expect(out.code, out.stderr).toBe(0);
    for (const target of targets) expect(readFileSync(target, "utf8")).toBe("target\n");
    expect(lstatSync(join(e.dir, "upload.txt")).isFile()).toBe(true);
    expect(lines(readFileSync(join(e.dir, "upload.txt"), "utf8"))).toHaveLength(600);
    expect(lstatSync(join(e.dir, "rejects.csv")).isFile()).toBe(true);
    expect(lines(readFileSync(join(e.dir, "rejects.csv"), "utf8"))).toHaveLength(601);
  });
});

describe("a full disk (issue 18, point 4; a small tmpfs, so root only)", () => {
  it("validate -o and --rejects onto a full disk exit 3 naming the file, and leave nothing there", async (context) => {
    const e = await sandbox();
    const disk = mountSmallDisk(join(e.dir, "full"), 64);
    if (!disk) context.skip("mounting a tmpfs needs root");
    try {
      // 260 KB of upload list and twice that of rejects, for 64 KiB of disk.
      e.file("list.csv", crmText(20_000));
      const runs = await Promise.all(
        [
          ["-o", "upload.txt"],
          ["--rejects", "rejects.csv"],
        ].map(([flag, name]) => {
          const path = join(disk!.dir, name!);
          return e.bin(["validate", "list.csv", "--country", "GB", flag!, path]).then((out) => ({ out, path }));
        }),
      );
      for (const { out, path } of runs) {
        expect(out.code, out.stderr).toBe(3);
        expect(out.stderr).toContain(`error: Cannot write ${path}: no space left on the device (ENOSPC); nothing was written.`);
      }
      expect(readdirSync(disk!.dir)).toEqual([]);
    } finally {
      disk?.remove();
    }
  });

  it('a full temp directory stops preparation with exit 3 naming the file, instead of a short upload list or "Cannot use write"', async (context) => {
    const e = await sandbox();
    const tmp = mountSmallDisk(join(e.dir, "tmp"), 64);
    if (!tmp) context.skip("mounting a tmpfs needs root");
    try {
      const list = crmText(20_000);
      e.file("list.csv", list);
      const env = { TMPDIR: tmp!.dir };
      const [fromFile, fromStdin] = await Promise.all([
        e.bin(["validate", "list.csv", "--country", "GB", "-o", "-"], { env }),
        e.bin(["validate", "-", "--country", "GB", "-o", "-"], { env, stdin: list.repeat(3) }),
      ]);
      expect(fromFile.code, fromFile.stderr).toBe(3);
      expect(fromFile.stderr).toMatch(/error: Cannot write \S+list-upload\.txt: no space left on the device \(ENOSPC\)/);
      // Stdin is copied to the temp directory first (a list may be read twice), and that copy fills it.
      expect(fromStdin.code, fromStdin.stderr).toBe(3);
      expect(fromStdin.stderr).toMatch(/error: Cannot write \S+spooled: no space left on the device \(ENOSPC\)/);
      for (const out of [fromFile, fromStdin]) expect(out.stdout).toBe("");
      expect(readdirSync(tmp!.dir)).toEqual([]);
    } finally {
      tmp?.remove();
    }
  });

  it("submit --wait -o with no space to stage a result or write the output exits 3 naming the file, says the task goes on, and the same command carries on", async (context) => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 100_000 });
    const staging = mountSmallDisk(join(e.configDir, "staging"), 16);
    if (!staging) context.skip("mounting a tmpfs needs root");
    const output = mountSmallDisk(join(e.dir, "full"), 16)!;
    try {
      e.file("list.txt", listText(2000));
      const argv = submitArgs("list.txt", ...WAITING, "-o", "results.csv");
      const noStaging = await e.bin(argv);
      expect(noStaging.code, noStaging.stderr).toBe(3);
      expect(noStaging.stderr).toContain(`error: Cannot write ${staging!.dir}/`);
      expect(noStaging.stderr).toContain("/part-1.result: no space left on the device (ENOSPC)");
      expect(noStaging.stderr).toContain(
        "The tasks were submitted and go on at the service. Free some space (or fix the permissions), then run the same command again: it takes these tasks' results",
      );
      const [id] = submittedIds(noStaging.stderr);
      staging!.remove();

      const fullPath = join(output.dir, "results.csv");
      const noRoom = await e.bin(submitArgs("list.txt", ...WAITING, "-o", fullPath));
      expect(noRoom.code, noRoom.stderr).toBe(3);
      expect(noRoom.stderr).toContain(`error: Cannot write ${fullPath}: no space left on the device (ENOSPC)`);
      expect(noRoom.stderr).toContain("The tasks were submitted and go on at the service.");
      expect(readdirSync(output.dir)).toEqual([]);

      // That run ended failed (its results are in the ledger): the same command writes the output from there.
      const again = await e.bin(argv);
      expect(again.code, again.stderr).toBe(0);
      expect(submittedIds(again.stderr)).toEqual([]);
      expect(again.stderr).toContain("Reused from the ledger: 2,000 numbers");
      expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(2001);
      expect(e.state().tasks.map((task) => task.id)).toEqual([id]);
    } finally {
      staging?.remove();
      output.remove();
    }
  }, 60_000);
});

describe("a full disk once tasks are submitted (issue 28, point 13)", () => {
  it("says of a store that filled up while the results were recorded that the task goes on, and the same command carries on once there is room", async (context) => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 100_000, balanceMicros: 1_000_000_000 });
    // Room for the store as the run starts (its plan, keys and the task's numbers), not for 20,000 results; the staged
    // results have a disk of their own.
    const state = mountSmallDisk(e.configDir, 1280);
    if (!state) context.skip("mounting a tmpfs needs root");
    const staging = mountSmallDisk(join(e.configDir, "staging"), 16 * 1024)!;
    try {
      e.file("list.txt", listText(20_000));
      const argv = submitArgs("list.txt", ...WAITING, "-o", "results.csv");
      const full = await e.bin(argv);
      expect(full.code, full.stderr).toBe(3);
      expect(full.stderr).toContain(`error: Cannot use ${join(e.configDir, "bulkcheck.db")}: no space left on the device (ENOSPC).`);
      expect(full.stderr).toContain(
        "The tasks were submitted and go on at the service. Free some space (or fix the permissions), then run the same command again: it takes these tasks' results",
      );
      const [id] = submittedIds(full.stderr);
      expect(spawnSync("mount", ["-o", "remount,size=16m", e.configDir]).status).toBe(0);
      const again = await e.bin(argv);
      expect(again.code, again.stderr).toBe(0);
      expect(e.state().tasks.map((task) => task.id)).toEqual([id]);
      expect(lines(readFileSync(join(e.dir, "results.csv"), "utf8"))).toHaveLength(20_001);
    } finally {
      staging.remove();
      state?.remove();
    }
  }, 60_000);
});

describe("temp files of killed writers (issue 18, point 5)", () => {
  it("are removed by the next command that writes the destination, even one that refuses because it exists", async () => {
    const e = await sandbox();
    e.file("list.csv", crmText(600));
    const id = (await e.run(submitArgs("list.csv", "--quiet", "--wait"))).stdout.trim();
    // Above any pid_max: the pid of a writer that is no longer running.
    const dead = 2 ** 30;
    const commands: Array<[string, string[]]> = [
      ["results.csv", ["download", id, "-o", "results.csv"]],
      ["joined.csv", ["download", id, "--join", "list.csv", "-o", "joined.csv"]],
      ["report.html", ["report", id, "-o", "report.html"]],
      ["upload.txt", ["validate", "list.csv", "--country", "GB", "-o", "upload.txt"]],
      ["rejects.csv", ["validate", "list.csv", "--country", "GB", "--rejects", "rejects.csv"]],
      ["dry-rejects.csv", submitArgs("list.csv", "--dry-run", "--rejects", "dry-rejects.csv")],
    ];
    for (const [name, argv] of commands) {
      for (const temp of [`.${name}.bulkcheck-${dead}-0a1b2c.tmp`, `.${name}.bulkcheck-${dead}-0a1b2d.zip.tmp`]) e.file(temp, "left");
      e.file(name, "precious\n");
      const refused = await e.run(argv);
      expect(refused.code, `${argv.join(" ")}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain(`error: ${name} already exists.`);
      expect(readFileSync(join(e.dir, name), "utf8")).toBe("precious\n");
      expect(tempFiles(e.dir), argv.join(" ")).toEqual([]);
    }
  });
});
