import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ScriptedFault } from "../../src/sandbox/index.js";
import { invalidUtf8, pngBytes, sparseFile, startStandIn, utf16WithoutBom, writeBytes } from "../helpers/fault-fixtures.js";
import { BIN, type CliResult } from "../helpers/cli.js";
import { e2eSandboxes, gbList, listText, submitArgs, type E2e } from "../helpers/sandbox.js";

/**
 * Broken, hostile and impossible input. Each case must end with one clear error
 * line (no stack trace: `assertClean` in the e2e helpers checks every run), the
 * documented exit code, nothing on stdout, and no task: nothing is uploaded.
 */
const sandbox = e2eSandboxes();
const TEN_MB = 10 * 1024 * 1024;
/** Far more than could be read in a test's time (sparse: it takes no disk), so only a list refused from its first bytes passes. */
const ONE_TB = 1024 ** 4;
const runningAsRoot = process.getuid?.() === 0;

/** The one `error:` line, checked to be the only one. */
function errorLine(out: CliResult): string {
  const errors = out.stderr.split("\n").filter((line) => line.startsWith("error:"));
  expect(errors, out.stderr).toHaveLength(1);
  return errors[0]!;
}

/** Nothing reached the submit endpoint, and no money moved. */
function expectNoUpload(e: E2e): void {
  const state = e.state();
  expect(state.stats.by_route.submit ?? 0).toBe(0);
  expect(state.tasks).toEqual([]);
  expect(state.ledger).toEqual([]);
}

interface ListCase {
  name: string;
  /** Writes the input into the work dir and returns the submit argv. */
  args: (e: E2e) => string[] | Promise<string[]>;
  code: number;
  error: RegExp;
}

const listCases: ListCase[] = [
  { name: "an empty file", args: (e) => submitArgs(e.file("empty.txt", "")), code: 3, error: /No number in the list can be checked/ },
  {
    name: "a CSV with only a header",
    args: (e) => submitArgs(e.file("header.csv", "name,phone\n")),
    code: 3,
    error: /No number in the list can be checked/,
  },
  {
    name: "a PNG image",
    args: (e) => submitArgs(writeBytes(join(e.dir, "photo.csv"), pngBytes())),
    code: 3,
    error: /is a PNG image, not a text list/,
  },
  {
    name: "a 1 TB sparse file (refused from its first bytes, never read to its end)",
    args: (e) => submitArgs(sparseFile(join(e.dir, "huge.txt"), ONE_TB)),
    code: 3,
    error: /contains NUL characters/,
  },
  {
    name: "a list whose upload file would be over max-file-bytes",
    async args(e) {
      expect((await e.run(["config", "set", "max-file-bytes", "1000"])).code).toBe(0);
      return submitArgs(e.file("list.txt", listText(500)));
    },
    code: 3,
    error: /The upload file would be [\d,]+ bytes, over the service's limit of 1,000/,
  },
  {
    name: "a single 10 MB line",
    args: (e) => submitArgs(e.file("line.txt", "7".repeat(TEN_MB))),
    code: 3,
    error: /line\.txt: line 1 is longer than 1 MiB/,
  },
  {
    name: "invalid UTF-8 after a UTF-8 byte-order mark",
    args: (e) => submitArgs(writeBytes(join(e.dir, "bad.txt"), Buffer.concat([Buffer.from("\ufeff"), invalidUtf8(gbList(600))]))),
    code: 3,
    error: /is not UTF-8 text \(bad bytes on line 301\)/,
  },
  {
    name: "UTF-16 without a byte-order mark",
    args: (e) => submitArgs(writeBytes(join(e.dir, "utf16.txt"), utf16WithoutBom(listText(600)))),
    code: 3,
    error: /contains NUL characters .*UTF-16 without a byte-order mark/,
  },
  {
    name: "a CSV with an unbalanced quote",
    args: (e) =>
      submitArgs(
        e.file("quotes.csv", ["name,phone", ...gbList(600).map((n, i) => (i === 3 ? `"Smith,${n}` : `x${i},${n}`))].join("\n") + "\n"),
      ),
    code: 3,
    error: /quotes\.csv: unbalanced quote: the quoted field opened on line 5 is never closed/,
  },
  {
    name: "--column naming a column the file does not have",
    args: (e) =>
      submitArgs(e.file("crm.csv", ["name,phone", ...gbList(600).map((n, i) => `x${i},${n}`)].join("\n") + "\n"), "--column", "mobile"),
    code: 2,
    error: /has no column named "mobile" \(columns: 1 "name", 2 "phone"\)/,
  },
  {
    name: "a directory instead of a file",
    args(e) {
      mkdirSync(join(e.dir, "lists.csv"));
      return submitArgs(join(e.dir, "lists.csv"));
    },
    code: 2,
    error: /is a directory, not a list file/,
  },
  { name: "a file that does not exist", args: (e) => submitArgs(join(e.dir, "missing.csv")), code: 2, error: /No such file/ },
  {
    name: "--country XX",
    args: (e) => ["submit", e.file("list.txt", listText(500)), "--type", "number_validation_batch", "--country", "XX"],
    code: 2,
    error: /--country XX is not an ISO 3166-1 alpha-2 country code/,
  },
  {
    name: "an unknown --type",
    args: (e) => ["submit", e.file("list.txt", listText(500)), "--type", "number_magic_batch", "--country", "GB"],
    code: 2,
    error: /Unknown --type "number_magic_batch"/,
  },
  {
    name: "an --idempotency-key over 128 characters",
    args: (e) => submitArgs(e.file("list.txt", listText(500)), "--idempotency-key", "k".repeat(129)),
    code: 2,
    error: /idempotency key must be 1 to 128 characters/,
  },
];

describe("a submit of hostile or broken input", () => {
  it.each(listCases)("refuses $name with exit $code, one error line and no upload", async ({ args, code, error }) => {
    const e = await sandbox();
    const out = await e.run(await args(e));
    expect(out.code, out.stderr).toBe(code);
    expect(out.stdout).toBe("");
    expect(errorLine(out)).toMatch(error);
    expectNoUpload(e);
  });

  it("refuses an unreadable file with exit 2 and no upload (as root, the binary runs without the capabilities that bypass file modes)", async (context) => {
    const e = await sandbox({ fakeClock: false });
    const list = e.file("secret.txt", listText(500));
    chmodSync(list, 0o000);
    let out: CliResult;
    if (!runningAsRoot) {
      out = await e.run(submitArgs(list));
    } else {
      // Root stays root, so it still reaches a clone under a private (0700) directory; only
      // CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, which let it read a file whatever its mode, are dropped.
      const child = spawn(
        "setpriv",
        ["--bounding-set", "-dac_override,-dac_read_search", "--", process.execPath, BIN, ...submitArgs(list)],
        {
          cwd: e.dir,
          env: { PATH: process.env.PATH, HOME: e.dir, ...e.env },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const code = await new Promise<number | null>((resolve, reject) => child.once("error", reject).once("close", resolve)).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === "ENOENT") context.skip("running as root without util-linux's setpriv, so file modes cannot be made to bite");
          throw error;
        },
      );
      if (/setpriv: .*(Operation not permitted|not supported)/.test(stderr))
        context.skip(`setpriv cannot drop capabilities here: ${stderr.trim()}`);
      out = { code: code ?? -1, stdout, stderr };
    }
    expect(out.code, out.stderr).toBe(2);
    expect(out.stdout).toBe("");
    expect(errorLine(out)).toMatch(/Cannot read .*secret\.txt: permission denied/);
    expect(out.stderr).not.toMatch(/^\s+at /m);
    expectNoUpload(e);
  });
});

interface ServiceCase {
  name: string;
  faults: ScriptedFault[];
  code: number;
  error: RegExp;
}

/** Retried answers get more faults than the 8 attempts a request may take. */
const submitFaults: ServiceCase[] = [
  {
    name: "HTML instead of JSON (every attempt)",
    faults: [{ route: "submit", fault: "html", times: 10 }],
    code: 7,
    error: /failed after 8 attempts .*HTTP 502 without a service envelope with text\/html/,
  },
  {
    name: "a truncated JSON body",
    faults: [{ route: "submit", fault: "truncated-json", times: 10 }],
    code: 1,
    error: /answered HTTP 200 with application\/json.*which is not a service response/,
  },
  {
    name: "an envelope without code",
    faults: [{ route: "submit", fault: "no-code-envelope", times: 10 }],
    code: 1,
    error: /answered HTTP 200 with application\/json.*which is not a service response/,
  },
];

describe("a service that answers garbage", () => {
  it.each(submitFaults)("ends a submit answered with $name with exit $code and creates no task", async ({ faults, code, error }) => {
    const e = await sandbox();
    e.sandbox.scriptFaults(faults);
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--yes"));
    expect(out.code, out.stderr).toBe(code);
    expect(out.stdout).toBe("");
    expect(errorLine(out)).toMatch(error);
    expect(e.state().tasks).toEqual([]);
    expect(e.state().ledger).toEqual([]);
  });

  it.each([
    { name: "HTML instead of JSON (every attempt)", fault: "html" as const, code: 7 },
    { name: "a truncated JSON body", fault: "truncated-json" as const, code: 1 },
    { name: "an envelope without code", fault: "no-code-envelope" as const, code: 1 },
  ])("ends a status check answered with $name with exit $code and one error line", async ({ fault, code }) => {
    const e = await sandbox();
    e.sandbox.scriptFaults([{ route: "check", fault, times: 10 }]);
    const out = await e.run(["status", "0123456789abcdef0123456789abcdef"]);
    expect(out.code, out.stderr).toBe(code);
    expect(out.stdout).toBe("");
    errorLine(out);
  });

  it("ends a download whose result URL keeps answering an HTML error page with exit 7, writing nothing", async () => {
    const e = await sandbox();
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--yes", "--quiet"))).stdout.trim();
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    e.sandbox.scriptFaults([{ route: "result", fault: "html", times: 30 }]);
    const out = await e.run(["download", id, "-o", "results.csv"]);
    expect(out.code, out.stderr).toBe(7);
    expect(errorLine(out)).toMatch(/HTTP 502/);
    expect(out.stderr).not.toContain("sig=");
    expect(readdirSync(e.dir).filter((name) => name.includes("results.csv"))).toEqual([]);
  });

  it("refuses a result URL answering 200 with an HTML page as a result file with exit 3, writing nothing", async () => {
    const page = "<!doctype html><html><body><h1>Oops</h1><p>Something went wrong.</p></body></html>\n";
    const standIn = await startStandIn({ result: { status: 200, headers: { "content-type": "text/html" }, body: page } });
    try {
      const e = await sandbox();
      const out = await e.run(["download", "0123456789abcdef0123456789abcdef", "-o", "results.csv"], {
        env: { BULKCHECK_BASE_URL: standIn.url },
      });
      expect(out.code, out.stderr).toBe(3);
      expect(errorLine(out)).toMatch(/result/i);
      expect(out.stderr).not.toContain("SECRETSIGNATURE");
      expect(existsSync(join(e.dir, "results.csv"))).toBe(false);
      expect(readdirSync(e.dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    } finally {
      await standIn.close();
    }
  });
});

describe("task ids that do not exist", () => {
  it("refuses a malformed task id with exit 2 before any request", async () => {
    const e = await sandbox();
    const out = await e.run(["status", "../../etc/passwd"]);
    expect(out.code).toBe(2);
    expect(errorLine(out)).toMatch(/is not a task id/);
    expect(e.state().stats.by_route.check ?? 0).toBe(0);
  });

  it("reports a well-formed unknown task id with exit 3, quoting the service's not-found answer", async () => {
    const e = await sandbox();
    for (const command of [["status"], ["wait", "--interval", "0.2"], ["download"]]) {
      const [verb, ...flags] = command;
      const out = await e.run([verb!, "0123456789abcdef0123456789abcdef", ...flags]);
      expect(out.code, out.stderr).toBe(3);
      expect(out.stdout).toBe("");
      expect(errorLine(out)).toMatch(/40000.*task 0123456789abcdef0123456789abcdef not found/);
    }
  });
});
