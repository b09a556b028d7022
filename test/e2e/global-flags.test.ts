import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2eSandboxes, lines, listText, submitArgs, type E2e } from "../helpers/sandbox.js";

const sandbox = e2eSandboxes();
// eslint-disable-next-line no-control-regex -- escape codes are what it finds
const SGR = /\u001b\[[0-9;]*m/;
const DEAD_URL = "http://127.0.0.1:9";

async function finished(e: E2e): Promise<string> {
  const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
  expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
  return id;
}

describe("bulkcheck balance", () => {
  it("prints USD and micros, and reading it records nothing", async () => {
    const e = await sandbox({ balanceMicros: 12_345_678 });
    const out = await e.run(["balance"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("$12.345678 (12345678 micros)\n");
    expect(out.stderr).toBe("");
    expect(e.state().ledger).toEqual([]);
  });

  it("prints {balance_micros, ...} as one JSON line with --json", async () => {
    const e = await sandbox({ balanceMicros: 2_500_000 });
    const out = await e.run(["balance", "--json"]);
    expect(out.code).toBe(0);
    expect(lines(out.stdout)).toHaveLength(1);
    expect(JSON.parse(out.stdout)).toEqual({
      balance_micros: 2_500_000,
      balance_usd: 2.5,
      reserved_micros: 0,
      reserved_usd: 0,
      unfinished_tasks: 0,
      unfinished_numbers: 0,
    });
  });

  it("reflects the reservation of a submitted task, and says what this store's unfinished tasks hold reserved until they finish", async () => {
    const e = await sandbox({ numbersPerSecond: 1, minTaskSize: 1 });
    await e.run(["config", "set", "min-task-size", "1"]);
    await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"));
    const [id] = lines((await e.run(submitArgs(e.file("more.txt", listText(40, 1000)), "--quiet"))).stdout);
    // number_validation_batch is $0.001 a number: 540 numbers reserved.
    expect(JSON.parse((await e.run(["balance", "--json"])).stdout)).toEqual({
      balance_micros: 9_460_000,
      balance_usd: 9.46,
      reserved_micros: 540_000,
      reserved_usd: 0.54,
      unfinished_tasks: 2,
      unfinished_numbers: 540,
    });
    const human = await e.run(["balance"]);
    expect(human.stdout).toBe("$9.46 (9460000 micros)\n");
    expect(human.stderr).toContain("Reserved by 2 unfinished task(s) of this store (540 numbers): $0.54, taken from the balance above");
    // Once a download has seen the small task finish, its numbers are charged (or given back) and no longer reserved.
    expect((await e.run(["wait", id!, "--interval", "1", "--quiet"])).code).toBe(0);
    expect((await e.run(["download", id!, "-o", "small.csv", "--quiet"])).code).toBe(0);
    expect(JSON.parse((await e.run(["balance", "--json"])).stdout)).toMatchObject({ reserved_micros: 500_000, unfinished_tasks: 1 });
  });
});

describe("bulkcheck demo", () => {
  it("runs the whole flow against its own sandbox and prints where the result went", async () => {
    const e = await sandbox({ fakeClock: false });
    const out = await e.run(["demo", "--dir", join(e.dir, "demo")]);
    expect(out.code, out.stderr).toBe(0);
    const [path] = lines(out.stdout);
    expect(lines(out.stdout)).toHaveLength(1);
    expect(path!.startsWith(join(e.dir, "demo"))).toBe(true);
    expect(existsSync(path!)).toBe(true);
    for (const step of ["$ bulkcheck balance", "$ bulkcheck submit", "$ bulkcheck wait", "$ bulkcheck download"])
      expect(out.stderr).toContain(step);
    // Its re-run uploads and reserves nothing, and its money line is what the checked numbers were charged, not a reservation.
    const charged = /Checked [\d,]+, no result [\d,]+\. Charged (\$[\d.]+); refunded/.exec(out.stderr)?.[1];
    expect(charged).toBeDefined();
    expect(out.stderr).toContain(`Charged in all: ${charged} for the numbers checked once.`);
    expect(out.stderr).toContain("the re-run reserved nothing");
    // The demo uses its own sandbox: the configured one is not touched.
    expect(e.state().stats.requests).toBe(0);
  });
});

describe("bulkcheck demo whose step fails", () => {
  it("ends with that step's exit code and says which step, rather than exit 1 for a bug", async () => {
    const e = await sandbox({ fakeClock: false });
    // The validate step's --rejects file is a directory: that step exits 2, as validate alone would.
    mkdirSync(join(e.dir, "demo", "rejects.csv"), { recursive: true });
    const out = await e.run(["demo", "--dir", join(e.dir, "demo")]);
    expect(out.code, out.stderr).toBe(2);
    expect(out.stderr).toContain('The demo stopped at its step "Check the list locally');
    expect(out.stderr).not.toContain("bulkcheck bug");
    expect(out.stdout).toBe("");
  });
});

describe("configuration precedence", () => {
  it("takes the base URL from --base-url over BULKCHECK_BASE_URL over the profile", async () => {
    const e = await sandbox();
    const noEnv = { BULKCHECK_BASE_URL: undefined };
    expect((await e.run(["config", "set", "base-url", DEAD_URL], { env: noEnv })).code).toBe(0);

    const fromFlag = await e.run(["balance", "--base-url", e.sandbox.url, "--verbose"], { env: { BULKCHECK_BASE_URL: DEAD_URL } });
    expect(fromFlag.code).toBe(0);
    expect(fromFlag.stderr).toContain(`using ${e.sandbox.url} (from flag)`);

    const fromEnv = await e.run(["balance", "--verbose"], { env: { BULKCHECK_BASE_URL: e.sandbox.url } });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stderr).toContain(`using ${e.sandbox.url} (from environment)`);

    expect((await e.run(["config", "set", "base-url", e.sandbox.url], { env: noEnv })).code).toBe(0);
    const fromProfile = await e.run(["balance", "--verbose"], { env: noEnv });
    expect(fromProfile.code).toBe(0);
    expect(fromProfile.stderr).toContain(`using ${e.sandbox.url} (from profile)`);
  });

  it("reads settings from the profile named by --profile or BULKCHECK_PROFILE", async () => {
    const e = await sandbox();
    const noEnv = { BULKCHECK_BASE_URL: undefined, BULKCHECK_API_KEY: undefined };
    expect((await e.run(["config", "set", "base-url", e.sandbox.url, "--profile", "sandbox"], { env: noEnv })).code).toBe(0);
    expect(
      (await e.run(["config", "set", "api-key", "-", "--profile", "sandbox"], { env: noEnv, stdin: e.env.BULKCHECK_API_KEY })).code,
    ).toBe(0);
    expect((await e.run(["balance", "--profile", "sandbox"], { env: noEnv })).code).toBe(0);
    expect((await e.run(["balance"], { env: { ...noEnv, BULKCHECK_PROFILE: "sandbox" } })).code).toBe(0);
    const otherProfile = await e.run(["balance"], { env: noEnv });
    expect(otherProfile.code).toBe(2);
    expect(otherProfile.stderr).toContain('profile "default"');
  });

  it("uses the profile's min-task-size before uploading", async () => {
    const e = await sandbox({ minTaskSize: 10 });
    expect((await e.run(["config", "set", "min-task-size", "10"])).code).toBe(0);
    const out = await e.run(submitArgs(e.file("small.txt", listText(20))));
    expect(out.code).toBe(0);
    expect(e.state().tasks[0]).toMatchObject({ submitted_lines: 20 });
  });
});

describe("global output flags", () => {
  it("--quiet keeps data and errors and drops every note", async () => {
    const e = await sandbox();
    const id = await finished(e);
    const wait = await e.run(["wait", id, "--interval", "0.2", "--quiet"]);
    expect(wait.stdout).toBe(`${id}\tsuccess\n`);
    expect(wait.stderr).toBe("");
    const download = await e.run(["download", id, "-q"]);
    expect(lines(download.stdout)).toHaveLength(501);
    expect(download.stderr).toBe("");
    const error = await e.run(["download", id, "-o", "missing-dir/x.csv", "--quiet"]);
    expect(error.code).toBe(2);
    expect(error.stderr).toContain("error:");
  });

  it("colours errors on a colour terminal, and never with --no-color or NO_COLOR", async () => {
    const e = await sandbox({ balanceMicros: 0 });
    const list = e.file("list.txt", listText(500));
    const coloured = await e.run(submitArgs(list, "--yes"), { tty: true, colors: true });
    expect(coloured.code).toBe(5);
    expect(coloured.stderr).toMatch(SGR);
    for (const run of [
      () => e.run(submitArgs(list, "--yes", "--no-color"), { tty: true, colors: true }),
      () => e.run(submitArgs(list, "--yes"), { tty: true, colors: true, env: { NO_COLOR: "1" } }),
    ]) {
      const out = await run();
      expect(out.code).toBe(5);
      expect(out.stdout + out.stderr).not.toMatch(SGR);
      expect(out.stderr).toContain("error: The balance $0.00 cannot cover");
    }
  });

  it("draws tables and spinners without colour codes under --no-color on a terminal", async () => {
    const e = await sandbox();
    const id = await finished(e);
    const status = await e.run(["status", id, "--no-color"], { tty: true, colors: true });
    expect(status.stdout).toContain("┌");
    expect(status.stdout).not.toMatch(SGR);
    const colouredStatus = await e.run(["status", id], { tty: true, colors: true });
    expect(colouredStatus.stdout).toMatch(SGR);
    const wait = await e.run(["wait", id, "--interval", "0.2"], { tty: true, colors: true, env: { NO_COLOR: "1" } });
    expect(wait.code).toBe(0);
    expect(wait.stdout + wait.stderr).not.toMatch(SGR);
  });

  it("prints no colour codes when the output is piped", async () => {
    const e = await sandbox({ balanceMicros: 0 });
    const out = await e.run(submitArgs(e.file("list.txt", listText(500))));
    expect(out.code).toBe(5);
    expect(out.stdout + out.stderr).not.toMatch(SGR);
  });

  it("--verbose logs every request on stderr with the key redacted, and stdout stays data", async () => {
    const e = await sandbox();
    const id = await finished(e);
    const out = await e.run(["download", id, "--verbose"]);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("with key sk_e…23b6 (from environment)");
    expect(out.stderr).toMatch(new RegExp(`GET /api/v1/bulk-tasks/${id} → 200 code 0`));
    expect(out.stderr).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/results\/[0-9a-f]{32}\.csv → 200/);
    expect(out.stderr).not.toContain("sig=");
    expect(out.stdout).not.toContain("GET ");
    expect(lines(out.stdout)).toHaveLength(501);
  });

  it("prints errors without a stack trace unless --verbose", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const plain = await e.run(submitArgs(list, "--idempotency-key", "k".repeat(200)));
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/^error: The idempotency key must be 1 to 128 characters/);
    expect(plain.stderr).not.toMatch(/^\s+at /m);
    const verbose = await e.run(submitArgs(list, "--idempotency-key", "k".repeat(200), "--verbose"));
    expect(verbose.code).toBe(2);
    expect(verbose.stderr).toMatch(/^\s+at /m);
  });

  it("shows a spinner on a terminal, but never with --verbose, --json, --quiet or in CI, nor when piped", async () => {
    const e = await sandbox();
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const spinner = await e.run(["wait", id, "--interval", "0.2"], { tty: true });
    expect(spinner.stderr).toContain("\u001b[?25l");
    expect(spinner.stderr).toContain("0 of 1 task finished; 0 of 500 numbers checked");
    const verbose = await e.run(["wait", id, "--interval", "0.2", "--verbose"], { tty: true });
    expect(verbose.code).toBe(0);
    expect(verbose.stderr).not.toContain("\u001b[");
    expect(verbose.stderr).toMatch(new RegExp(`^GET /api/v1/bulk-tasks/${id} → 200 code 0 in \\d+ms$`, "m"));
    const piped = await e.run(["wait", id, "--interval", "0.2"]);
    expect(piped.stderr).not.toContain("\u001b[");
    const ci = await e.run(["wait", id, "--interval", "0.2"], { tty: true, env: { CI: "true" } });
    expect(ci.stderr).not.toContain("\u001b[");
    const json = await e.run(["wait", id, "--interval", "0.2", "--json"], { tty: true });
    expect(json.stderr).not.toContain("\u001b[");
    const quiet = await e.run(["wait", id, "--interval", "0.2", "--quiet"], { tty: true });
    expect(quiet.stderr).toBe("");
  });

  it("prints the version, and help with examples for every command of the contract", async () => {
    const e = await sandbox();
    const version = await e.run(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const commands = [
      ["submit"],
      ["status"],
      ["wait"],
      ["download"],
      ["balance"],
      ["validate"],
      ["demo"],
      ["sandbox"],
      ["retry-failed"],
      ["config"],
      ["config", "set"],
      ["config", "get"],
      ["config", "list"],
      ["config", "unset"],
      ["config", "path"],
      ["completion"],
    ];
    for (const command of commands) {
      const help = await e.run([...command, "--help"]);
      expect(help.code, command.join(" ")).toBe(0);
      expect(help.stdout, command.join(" ")).toContain("Examples:");
      expect(help.stdout, command.join(" ")).toContain(`$ bulkcheck ${command.join(" ")}`);
    }
    const root = await e.run(["--help"]);
    expect(root.stdout).toContain("Exit codes:");
    for (const code of ["0", "1", "2", "3", "4", "5", "6", "7", "8", "130", "143"])
      expect(root.stdout).toMatch(new RegExp(`^\\s+${code}  `, "m"));
  });

  it("maps commander's own usage errors to exit 2", async () => {
    const e = await sandbox();
    const unknownFlag = await e.run(["balance", "--frobnicate"]);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain("unknown option");
    const missingArg = await e.run(["submit", "list.txt", "--country", "GB"]);
    expect(missingArg.code).toBe(2);
    const badNumber = await e.run(["wait", "3f2a91c0e4b14d0f9a7e2b6c8d1f0a53", "--interval", "soon"]);
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toContain(
      'expected a duration: a number of seconds (90), or one with a unit: s, m, h or d (90s, 15m, 12h, 7d); got "soon"',
    );
  });
});
