import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileModesPrefix, spawnCli, tempDir } from "../helpers/cli.js";
import { startDripServer } from "../helpers/fault-fixtures.js";
import { API_KEY, e2eSandboxes, lines, listText, submitArgs, until, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();

/** A finished task of `count` numbers on a real-clock sandbox, for spawned binaries. */
async function finishedTask(count = 500): Promise<{ e: E2e; id: string }> {
  const e = await sandbox({ fakeClock: false, numbersPerSecond: 100_000 });
  const out = await e.run(submitArgs(e.file("list.txt", listText(count)), "--yes", "--quiet", "--wait", "--interval", "0.2"));
  expect(out.code, out.stderr).toBe(0);
  return { e, id: out.stdout.trim() };
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe("--force replaces only what is a file (issue 12, problem 6)", () => {
  it("refuses a FIFO and a directory with exit 2, leaving them as they were", async () => {
    const { e, id } = await finishedTask();
    const fifo = join(e.dir, "results.fifo");
    execFileSync("mkfifo", [fifo]);
    mkdirSync(join(e.dir, "results-dir"));
    const [toFifo, toDir] = await Promise.all([
      e.bin(["download", id, "-o", fifo, "--force"]),
      e.bin(["download", id, "-o", "results-dir", "--force"]),
    ]);
    expect(toFifo.code).toBe(2);
    expect(toFifo.stderr).toContain(`${fifo} is a named pipe (FIFO): --force replaces only a regular file (or a symbolic link).`);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(toDir.code).toBe(2);
    expect(toDir.stderr).toContain("results-dir is a directory");
    expect(lstatSync(join(e.dir, "results-dir")).isDirectory()).toBe(true);
  });

  it("refuses a device with exit 2 (as root, on a /dev/null made with mknod beside the test's files)", async (context) => {
    if (process.getuid?.() !== 0) context.skip("only root can make a device node");
    const { e, id } = await finishedTask();
    const device = join(e.dir, "null");
    if (spawnSync("mknod", [device, "c", "1", "3"]).status !== 0) context.skip("this system does not let root make device nodes");
    const out = await e.bin(["download", id, "-o", device, "--force"]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`${device} is a device`);
    expect(lstatSync(device).isCharacterDevice()).toBe(true);
  });

  it("keeps the mode of a file it replaces, replaces a symbolic link (not its target), and a new file honours the umask", async () => {
    const { e, id } = await finishedTask();
    const existing = e.file("private.csv", "old\n");
    chmodSync(existing, 0o600);
    const target = e.file("target.csv", "target\n");
    symlinkSync(target, join(e.dir, "link.csv"));
    const umask027 = (argv: string[]) => e.bin(argv, { prefix: ["sh", "-c", 'umask 027; exec "$0" "$@"'] });
    const [replaced, linked, fresh] = await Promise.all([
      umask027(["download", id, "-o", "private.csv", "--force"]),
      umask027(["download", id, "-o", "link.csv", "--force"]),
      umask027(["download", id, "-o", "new.csv"]),
    ]);
    for (const out of [replaced, linked, fresh]) expect(out.code, out.stderr).toBe(0);
    expect(mode(existing)).toBe(0o600);
    expect(lines(readFileSync(existing, "utf8"))).toHaveLength(501);
    expect(lstatSync(join(e.dir, "link.csv")).isFile()).toBe(true);
    expect(readFileSync(target, "utf8")).toBe("target\n");
    expect(mode(join(e.dir, "new.csv"))).toBe(0o640);
  });

  it("stages a result for stdout as a 0600 file inside a 0700 directory of $TMPDIR, removed when the run ends", async () => {
    // A result host that sends a byte every 50 ms keeps the download (and its staged file) going until --timeout.
    const slow = await startDripServer({ intervalMs: 50, quickChecks: true });
    const tmp = tempDir("bulkcheck-e2e-tmpdir-");
    const configDir = tempDir("bulkcheck-e2e-config-");
    const env = { TMPDIR: tmp, BULKCHECK_BASE_URL: slow.url, BULKCHECK_API_KEY: API_KEY, BULKCHECK_CONFIG_DIR: configDir };
    try {
      const run = spawnCli(["download", "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53", "--timeout", "5"], { env });
      const staged = () => readdirSync(tmp).flatMap((dir) => readdirSync(join(tmp, dir)).map((name) => join(dir, name)));
      await until(() => run.child.exitCode !== null || staged().length > 0, 100_000);
      const [file] = staged();
      expect(file, run.output().stderr).toBeDefined();
      expect(mode(join(tmp, dirname(file!)))).toBe(0o700);
      expect(mode(join(tmp, file!))).toBe(0o600);
      const out = await run.done;
      expect(out.code).toBe(8);
      expect(out.stdout).toBe("");
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      await slow.close();
    }
  }, 120_000);

  it("exits 3 naming the path when the file system refuses the write, and leaves nothing behind", async (context) => {
    if (spawnSync("prlimit", ["--version"]).error) context.skip("util-linux's prlimit is not installed");
    const { e, id } = await finishedTask(3000);
    const out = await e.bin(["download", id, "-o", "results.csv"], { prefix: ["prlimit", "--fsize=16384"] });
    expect(out.code).toBe(3);
    expect(out.stderr).toContain(`Cannot write ${join(e.dir, "results.csv")}: the file grew larger than this system allows (EFBIG)`);
    expect(existsSync(join(e.dir, "results.csv"))).toBe(false);
    expect(readdirSync(e.dir).filter((name) => name.includes("bulkcheck"))).toEqual([]);
  });
});

describe("destinations checked before anything is uploaded (issue 12, problem 7)", () => {
  it("refuses -o and --rejects in a directory it cannot write with exit 2, having uploaded nothing", async (context) => {
    const prefix = fileModesPrefix();
    if (!prefix) context.skip("running as root without util-linux's setpriv, so file modes cannot be made to bite");
    const e = await sandbox({ fakeClock: false });
    const list = e.file("list.txt", listText(500));
    const readOnly = join(e.dir, "read-only");
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o555);
    const [output, rejects] = await Promise.all([
      e.bin(submitArgs(list, "--yes", "--wait", "-o", join(readOnly, "results.csv")), { prefix: prefix! }),
      e.bin(submitArgs(list, "--yes", "--rejects", join(readOnly, "rejects.csv")), { prefix: prefix! }),
    ]);
    for (const out of [output, rejects]) {
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain(`the directory ${readOnly} is not writable (EACCES)`);
    }
    expect(e.state().tasks).toEqual([]);
    expect(e.state().stats.requests).toBe(0);
  });
});

describe("throwing an output away (issue 28, point 15)", () => {
  it("writes every output into /dev/null and /dev/stdout as asked, leaving /dev/null a device", async () => {
    const { e, id } = await finishedTask();
    const list = e.file("list.csv", `phone\n${listText(3)}x\n`);
    const outs = await Promise.all([
      e.bin(["validate", list, "--country", "GB", "-o", "/dev/null", "--rejects", "/dev/null"]),
      e.bin(["download", id, "-o", "/dev/null", "--report", "/dev/null"]),
      e.bin(["download", id, "--join", "list.txt", "-o", "/dev/null"]),
      e.bin(["report", id, "-o", "/dev/null"]),
      e.bin(["ledger", "export", "--format", "xlsx", "-o", "/dev/null"]),
    ]);
    for (const out of outs) {
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toBe("");
    }
    expect(lstatSync("/dev/null").isCharacterDevice()).toBe(true);
    const toStdout = await e.bin(["validate", list, "--country", "GB", "-o", "/dev/stdout"]);
    expect(toStdout.code, toStdout.stderr).toBe(0);
    expect(lines(toStdout.stdout)).toHaveLength(3);
    expect(lstatSync("/dev/stdout").isSymbolicLink()).toBe(true);
  });

  it("still refuses /dev/null when it is the list being read, and every other device, naming the flag that gave it and only a remedy it takes", async () => {
    const { e } = await finishedTask();
    const source = await e.bin(["validate", "/dev/null", "--country", "GB", "-o", "/dev/null"]);
    expect(source.code, source.stderr).toBe(2);
    expect(source.stderr).toContain("/dev/null is the list being read");
    const list = e.file("more.txt", listText(500, 500));
    for (const flag of ["--changes", "--report", "-o"]) {
      const out = await e.bin(submitArgs(list, "--wait", flag, "/dev/full"));
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain("/dev/full is a device: --force replaces only a regular file (or a symbolic link).");
      // A report takes no `-` (it is refused with "--report needs a file name"): its hint does not offer one.
      expect(out.stderr).toContain(
        flag === "--report"
          ? "Give --report the path of a file.\n"
          : `Give ${flag} the path of a file; to write into a pipe or device, use ${flag} - and redirect stdout.`,
      );
    }
    expect(e.state().tasks).toHaveLength(1);
  });
});
