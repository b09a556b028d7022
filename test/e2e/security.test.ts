import { lookup } from "node:dns/promises";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startStandIn, TWO_ROW_RESULT } from "../helpers/fault-fixtures.js";
import { tempDir, type CliResult } from "../helpers/cli.js";
import { API_KEY, e2eSandboxes, listText, submitArgs, submittedIds, TASK_ID, until } from "../helpers/sandbox.js";

/**
 * The API key spends the balance and a result URL is a bearer link: neither may
 * leak into output, logs, files or process arguments, and the key goes only to the
 * service's own origin.
 */
const sandbox = e2eSandboxes();
const mode = (path: string) => statSync(path).mode & 0o777;

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());
}

describe("the API key", () => {
  it("appears in no output, log, error message, store, result or argument list of a full flow", async () => {
    const e = await sandbox({ fakeClock: false, numbersPerSecond: 200 });
    const outputs: CliResult[] = [];
    const list = e.file("list.txt", `${listText(500)}not a number\n`);
    // Faults on every route, so retry lines and error paths are logged too.
    e.sandbox.scriptFaults([
      { route: "balance", fault: "50303", retryAfter: "0" },
      { route: "submit", fault: "42901", retryAfter: "0" },
      { route: "check", fault: "drop" },
      { route: "result", fault: "drop-mid-download" },
    ]);
    const flow = e.spawn(
      submitArgs(list, "--yes", "--verbose", "--wait", "--interval", "0.2", "-o", "results.csv", "--rejects", "rejects.csv"),
    );
    // While it runs, the process's arguments are visible to every user of the machine.
    await until(() => flow.output().stderr.includes("processing"));
    const cmdline = readFileSync(`/proc/${flow.child.pid}/cmdline`, "utf8");
    expect(cmdline).toContain("submit");
    outputs.push(await flow.done);
    expect(outputs[0]!.code, outputs[0]!.stderr).toBe(0);
    // With -o the results are the data: the id is announced on stderr.
    const [id] = submittedIds(outputs[0]!.stderr);
    expect(id).toMatch(TASK_ID);

    outputs.push(await e.run(["status", id!, "--verbose", "--json"]));
    outputs.push(await e.run(["download", id!, "--format", "jsonl", "--verbose"]));
    outputs.push(await e.run(["config", "set", "api-key", "-"], { env: { BULKCHECK_API_KEY: undefined }, stdin: `${API_KEY}\n` }));
    outputs.push(await e.run(["config", "get", "api-key"], { env: { BULKCHECK_API_KEY: undefined } }));
    outputs.push(await e.run(["config", "list", "--json"], { env: { BULKCHECK_API_KEY: undefined } }));
    outputs.push(await e.run(["balance", "--verbose"], { env: { BULKCHECK_API_KEY: undefined } }));
    // Errors: a refused key (with a stack trace under --verbose), maintenance, a bad base URL.
    const wrongKey = "sk_e2e_WRONGKEYCANARY_00000000";
    const refused = await e.run(["balance", "--verbose"], { env: { BULKCHECK_API_KEY: wrongKey } });
    expect(refused.code).toBe(4);
    expect(refused.stdout + refused.stderr).not.toContain("WRONGKEYCANARY");
    e.sandbox.scriptFaults([{ route: "check", fault: "50300" }]);
    outputs.push(refused, await e.run(["status", id!, "--verbose"]));
    // Connection refused through every retry (the waits are skipped).
    outputs.push(
      await e.run(["balance", "--verbose"], { env: { BULKCHECK_BASE_URL: "http://127.0.0.1:1" }, sleep: async () => undefined }),
    );
    expect(outputs.at(-1)!.code).toBe(7);

    const texts = [
      cmdline,
      ...outputs.flatMap((out) => [out.stdout, out.stderr]),
      // The store (runs, tasks and the result ledger) and everything else in the state directory.
      ...filesUnder(e.configDir)
        .filter((path) => path !== join(e.configDir, "config.json"))
        .map((path) => readFileSync(path, "latin1")),
      readFileSync(join(e.dir, "results.csv"), "utf8"),
      readFileSync(join(e.dir, "rejects.csv"), "utf8"),
    ];
    for (const text of texts) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain("LEAKCANARY");
    }
    // Only the config file holds it, as set.
    expect(existsSync(join(e.configDir, "bulkcheck.db"))).toBe(true);
    const holding = filesUnder(e.configDir).filter((path) => readFileSync(path, "utf8").includes(API_KEY));
    expect(holding).toEqual([join(e.configDir, "config.json")]);
    expect(outputs.some((out) => out.stderr.includes("retry:"))).toBe(true);
  });

  it("is sent only to the base URL's origin, never to a separate result host", async () => {
    const e = await sandbox({ separateResultOrigin: true });
    const out = await e.run(submitArgs(e.file("list.txt", listText(500)), "--yes", "--wait", "--interval", "0.2", "-o", "results.csv"));
    expect(out.code, out.stderr).toBe(0);
    const state = e.state();
    expect(state.stats.by_route.result).toBeGreaterThanOrEqual(1);
    expect(state.stats.api_key_sent_to_result_host).toBe(0);
  });

  it("is dropped when a result link redirects to another origin", async () => {
    const resultHost = await startStandIn({ result: { status: 200, headers: { "content-type": "text/csv" }, body: TWO_ROW_RESULT } });
    const service = await startStandIn({
      result: { status: 302, headers: { location: `${resultHost.url}/results/file.csv?sig=OTHERSECRET` }, body: "" },
    });
    try {
      const e = await sandbox();
      const out = await e.run(["download", "0123456789abcdef0123456789abcdef", "-o", "results.csv", "--verbose"], {
        env: { BULKCHECK_BASE_URL: service.url },
      });
      expect(out.code, out.stderr).toBe(0);
      expect(readFileSync(join(e.dir, "results.csv"), "utf8")).toBe(TWO_ROW_RESULT);
      expect(resultHost.requests).toEqual([{ line: "GET /results/file.csv", key: false }]);
      expect(out.stderr).not.toMatch(/SECRETSIGNATURE|OTHERSECRET/);
    } finally {
      await Promise.all([resultHost.close(), service.close()]);
    }
  });

  it("is not sent on when the service's own API redirects to another origin", async () => {
    const elsewhere = await startStandIn();
    const service = await startStandIn({
      check: { status: 302, headers: { location: `${elsewhere.url}/api/v1/bulk-tasks/0123456789abcdef0123456789abcdef` }, body: "" },
    });
    try {
      const e = await sandbox();
      const out = await e.run(["status", "0123456789abcdef0123456789abcdef"], { env: { BULKCHECK_BASE_URL: service.url } });
      expect(out.code).toBe(1);
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await Promise.all([elsewhere.close(), service.close()]);
    }
  });
});

describe("files holding secrets", () => {
  it("creates the config file and the store 0600 inside 0700 directories", async () => {
    const e = await sandbox();
    const home = tempDir("bulkcheck-home-");
    // No BULKCHECK_CONFIG_DIR: the XDG locations under HOME, created by bulkcheck itself.
    const env = { BULKCHECK_CONFIG_DIR: undefined, HOME: home, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined };
    expect((await e.run(["config", "set", "api-key", "-"], { env, stdin: `${API_KEY}\n` })).code).toBe(0);
    expect((await e.run(submitArgs(e.file("list.txt", listText(500)), "--yes"), { env })).code).toBe(0);
    const configDir = join(home, ".config", "bulkcheck");
    const stateDir = join(home, ".local", "state", "bulkcheck");
    expect(mode(configDir)).toBe(0o700);
    expect(mode(join(configDir, "config.json"))).toBe(0o600);
    expect(mode(stateDir)).toBe(0o700);
    expect(mode(join(stateDir, "bulkcheck.db"))).toBe(0o600);
    for (const path of [...filesUnder(configDir), ...filesUnder(stateDir)]) expect(mode(path), path).toBe(0o600);
  });

  it("warns when the config file is readable by other users", async () => {
    const e = await sandbox();
    expect((await e.run(["config", "set", "api-key", "-"], { stdin: `${API_KEY}\n` })).code).toBe(0);
    chmodSync(join(e.configDir, "config.json"), 0o644);
    const out = await e.run(["balance"], { env: { BULKCHECK_API_KEY: undefined } });
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/^warning: .*config\.json is readable by other users \(mode 644\); run: chmod 600/m);
  });
});

describe("plain http", () => {
  it("warns that the key travels in clear text for a base URL that is not loopback, before any request fails", async () => {
    const e = await sandbox();
    const out = await e.run(["balance"], { env: { BULKCHECK_BASE_URL: "http://bulkcheck.invalid" } });
    expect(out.stderr).toMatch(
      /^warning: http:\/\/bulkcheck\.invalid is plain http: the API key travels in clear text\. Use https:\/\/\.$/m,
    );
    // .invalid never resolves: the warning came before the (failed) connection.
    expect(out.code).toBe(7);
    expect(out.stderr).toContain("does not resolve");
  });

  it("prints no such warning for 127.0.0.1 or localhost", async () => {
    const e = await sandbox();
    const port = new URL(e.sandbox.url).port;
    for (const base of [e.sandbox.url, `http://localhost:${port}`]) {
      const out = await e.run(["balance"], { env: { BULKCHECK_BASE_URL: base } });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stderr).not.toContain("clear text");
    }
  });

  it("warns for a host name that is not literally loopback, and still works (this machine's name resolves to 127.0.0.1)", async (context) => {
    const name = hostname();
    const address = await lookup(name).catch(() => undefined);
    if (!address || !address.address.startsWith("127.")) context.skip(`${name} does not resolve to a loopback address here`);
    const e = await sandbox({ host: "127.0.0.1" });
    const base = `http://${name}:${new URL(e.sandbox.url).port}`;
    const out = await e.run(["balance"], { env: { BULKCHECK_BASE_URL: base } });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(`warning: ${base} is plain http: the API key travels in clear text.`);
  });
});

describe("result URLs", () => {
  it("are not logged at the default verbosity, and with --verbose only without their query string", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const quiet = await e.run(submitArgs(list, "--yes", "--wait", "--interval", "0.2", "-o", "a.csv"));
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain("/results/");
    const id = submittedIds(quiet.stderr)[0]!;
    const verbose = await e.run(["download", id, "-o", "b.csv", "--verbose"]);
    expect(verbose.code).toBe(0);
    expect(verbose.stderr).toMatch(new RegExp(`GET http://127\\.0\\.0\\.1:\\d+/results/${id}\\.csv → 200`));
    const json = await e.run(["status", id, "--json", "--verbose"]);
    for (const text of [quiet.stdout, quiet.stderr, verbose.stdout, verbose.stderr, json.stdout, json.stderr]) {
      expect(text).not.toMatch(/sig=|expires=/);
    }
    // Nor are they kept: no file of the state directory (the store included) holds one.
    for (const path of filesUnder(e.configDir)) expect(readFileSync(path, "latin1"), path).not.toMatch(/\/results\/|sig=/);
    expect(existsSync(join(e.dir, "b.csv"))).toBe(true);
  });
});
