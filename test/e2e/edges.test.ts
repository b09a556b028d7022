import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import { allowSmallTasks } from "../helpers/results-fixtures.js";
import { runInTerminal } from "../helpers/terminal.js";
import { e2eSandboxes, lines, listText, promptedSubmitArgs, submitArgs } from "../helpers/sandbox.js";

/**
 * Issue 14: signals and the edges of the world get their own exit codes, never
 * "unexpected" (1). The real binary throughout; prompts in a real pseudo-terminal.
 */
const sandbox = e2eSandboxes();
// Real processes, some in a pseudo-terminal: generous, for a machine busy with other work.
vi.setConfig({ testTimeout: 120_000 });
const CTRL_C = "\u0003";
const CTRL_D = "\u0004";

describe("a prompt the user backs out of", () => {
  it.each([
    ["Ctrl-C", CTRL_C],
    ["Ctrl-D", CTRL_D],
  ])("%s at the Reserve prompt exits 130 and uploads nothing", async (_name, key) => {
    const e = await sandbox({ fakeClock: false });
    const list = e.file("list.txt", listText(500));
    const out = await runInTerminal(promptedSubmitArgs(list), { env: e.env, cwd: e.dir, keys: [{ after: "[y/N]", send: key }] });
    expect(out.code).toBe(130);
    expect(out.screen).toContain("Reserve $0.50 of $10.00? [y/N]");
    expect(out.screen).toContain("Cancelled; nothing was uploaded.");
    expect(out.screen).not.toContain("unexpected");
    expect(e.state().tasks).toEqual([]);
    expect(e.state().ledger).toEqual([]);
  });

  it("Ctrl-C at the API key prompt exits 130 and leaves the stored key alone", async () => {
    const e = await sandbox({ fakeClock: false });
    const env = { ...e.env, BULKCHECK_API_KEY: undefined };
    const out = await runInTerminal(["config", "set", "api-key"], {
      env,
      cwd: e.dir,
      keys: [{ after: "API key (input hidden):", send: CTRL_C }],
    });
    expect(out.code).toBe(130);
    expect(out.screen).toContain("Cancelled; the API key was not changed.");
    // Nothing was ever to be uploaded: a key prompt does not speak of uploads.
    expect(out.screen).not.toContain("uploaded");
    expect(existsSync(join(e.configDir, "config.json"))).toBe(false);
  });
});

describe("signals", () => {
  // SIGTERM while waiting: process.test.ts, beside Ctrl-C (143 and 130, the same clean-up).
  it("documents 143 beside 130 in the exit-code table", async () => {
    const e = await sandbox();
    const help = await e.bin(["help", "exit-codes"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^\s+130 {2}interrupted/m);
    expect(help.stdout).toMatch(/^\s+143 {2}terminated \(SIGTERM\)/m);
  });
});

describe("the edges of the world", () => {
  it("a port in use exits 2 and says what to do", async () => {
    const other = await startSandbox({ port: 0 });
    try {
      const port = new URL(other.url).port;
      const e = await sandbox();
      const out = await e.bin(["sandbox", "--port", port]);
      expect(out.code).toBe(2);
      expect(out.stderr).toContain(`port ${port} is in use (another sandbox?); pick --port or stop it`);
      expect(out.stderr).not.toContain("unexpected");
    } finally {
      await other.close();
    }
  });

  it("a directory as -o exits 2 before anything is uploaded or downloaded", async () => {
    const e = await sandbox({ fakeClock: false });
    mkdirSync(join(e.dir, "out"));
    const list = e.file("list.txt", listText(500));
    const submit = await e.bin(submitArgs(list, "--wait", "-o", "out", "--force"));
    expect(submit.code).toBe(2);
    expect(submit.stderr).toContain("out is a directory");
    expect(e.state().tasks).toEqual([]);
    const id = (await e.run(submitArgs(list, "--quiet"))).stdout.trim();
    const [download, validate] = await Promise.all([
      e.bin(["download", id, "-o", e.dir, "--force"]),
      e.bin(["validate", list, "--country", "GB", "-o", "out"]),
    ]);
    for (const out of [download, validate]) {
      expect(out.code).toBe(2);
      expect(out.stderr).toContain("is a directory");
      expect(out.stderr).not.toContain("unexpected");
    }
  });

  it("a blank key in the environment is an authentication problem (exit 4), not a usage error", async () => {
    const e = await sandbox();
    const out = await e.bin(["balance"], { env: { BULKCHECK_API_KEY: " " } });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("BULKCHECK_API_KEY is set but blank.");
    expect(e.state().stats.requests).toBe(0);
  });

  it("an empty BULKCHECK_API_KEY is that authentication error too, never a silent fall back to the profile's key", async () => {
    const e = await sandbox();
    const stored = await e.bin(["config", "set", "api-key", "-"], {
      env: { BULKCHECK_API_KEY: undefined },
      stdin: `${e.env.BULKCHECK_API_KEY}\n`,
    });
    expect(stored.code, stored.stderr).toBe(0);
    const out = await e.bin(["balance"], { env: { BULKCHECK_API_KEY: "" } });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("BULKCHECK_API_KEY is set but blank.");
    expect(e.state().stats.requests).toBe(0);
    // config list says which key is in force: the blank variable's.
    const list = await e.bin(["config", "list", "--json"], { env: { BULKCHECK_API_KEY: "" } });
    expect(JSON.parse(list.stdout)).toMatchObject({ settings: { "api-key": { source: "environment" } } });
  });

  it("a key the service refuses (40100) gets the hint that fits where it came from: the variable, or the profile", async () => {
    const e = await sandbox();
    const fromVariable = await e.bin(["balance"], { env: { BULKCHECK_API_KEY: "sk_wrong_0000000000000000" } });
    expect(fromVariable.code).toBe(4);
    expect(fromVariable.stderr).toContain("The service rejected the API key (40100).");
    expect(fromVariable.stderr).toContain("The key came from BULKCHECK_API_KEY");
    expect(fromVariable.stderr).not.toContain("config set api-key");

    const noVariable = { BULKCHECK_API_KEY: undefined };
    expect((await e.bin(["config", "set", "api-key", "-"], { env: noVariable, stdin: "sk_wrong_0000000000000000\n" })).code).toBe(0);
    const fromProfile = await e.bin(["balance", "--json"], { env: noVariable });
    expect(fromProfile.code).toBe(4);
    const { error } = JSON.parse(lines(fromProfile.stderr).at(-1)!) as { error: { code: string; hint: string } };
    expect(error.code).toBe("auth");
    expect(error.hint).toContain("bulkcheck config set api-key");
    expect(error.hint).not.toContain("BULKCHECK_API_KEY");
  });
});

describe("no silent spending", () => {
  it("refuses to reserve without --yes where nothing can prompt (exit 2, nothing uploaded)", async () => {
    const e = await sandbox({ fakeClock: false });
    const list = e.file("list.txt", listText(500));
    const piped = await e.bin(promptedSubmitArgs("-"), { stdin: readFileSync(list, "utf8") });
    expect(piped.code).toBe(2);
    expect(piped.stdout).toBe("");
    expect(piped.stderr).toContain("add --yes to submit without a prompt");
    expect(e.state().tasks).toEqual([]);
    expect(e.state().ledger).toEqual([]);
    const dryRun = await e.bin(promptedSubmitArgs(list, "--dry-run"));
    expect(dryRun.code).toBe(0);
    expect(dryRun.stderr).toContain("Dry run: nothing was uploaded.");
    const withYes = await e.bin(promptedSubmitArgs("-", "--yes"), { stdin: readFileSync(list, "utf8") });
    expect(withYes.code).toBe(0);
    expect(lines(withYes.stdout)).toEqual([e.state().tasks[0]!.id]);
  });

  it("asks retry-failed for --yes too", async () => {
    const e = await sandbox({ noResultRate: 0.1, minTaskSize: 1 });
    await allowSmallTasks(e);
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    expect((await e.run(["wait", id, "--interval", "0.2", "--quiet"])).code).toBe(0);
    const out = await e.run(["retry-failed", id]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("add --yes to submit without a prompt");
    expect(e.state().tasks).toHaveLength(1);
  });
});

describe("--json failures", () => {
  it("are one JSON object on stderr with code, exit_code, message and hint", async () => {
    const e = await sandbox();
    const badKey = await e.bin(["balance", "--json"], { env: { BULKCHECK_API_KEY: "sk_wrong_0000000000000000" } });
    expect(badKey.code).toBe(4);
    expect(badKey.stdout).toBe("");
    const error = JSON.parse(lines(badKey.stderr).at(-1)!) as { error: Record<string, unknown> };
    // The hint says where the refused key came from (it was null).
    expect(error).toEqual({
      error: {
        code: "auth",
        exit_code: 4,
        message: expect.stringContaining("(40100)"),
        hint: expect.stringContaining("BULKCHECK_API_KEY"),
      },
    });

    const usage = await e.bin(["balance", "--frobnicate", "--json"]);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toEqual({
      error: { code: "usage", exit_code: 2, message: "unknown option '--frobnicate'", hint: "Run bulkcheck --help for usage." },
    });
  });
});
