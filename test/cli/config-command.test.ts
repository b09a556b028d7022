import { readFileSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config/settings.js";
import { runCli, tempDir } from "../helpers/cli.js";

const KEY = "sk_live_0123456789abcdefSECRET";

function env() {
  return { BULKCHECK_CONFIG_DIR: tempDir() };
}

describe("bulkcheck config", () => {
  it("names every setting a profile holds in the help of set, get and unset", async () => {
    const keys = new Set(Object.keys(SETTINGS).map((key) => (key.startsWith("price.") ? "price.<product>" : key)));
    expect(keys.has("store")).toBe(true);
    for (const verb of ["set", "get", "unset"]) {
      const help = (await runCli(["config", verb, "--help"])).stdout.replace(/\s+/g, " ");
      for (const key of keys) expect(help, `config ${verb} --help`).toContain(key);
    }
  });

  it("reads the API key from stdin with -, stores it 0600 and never prints it", async () => {
    const e = env();
    const set = await runCli(["config", "set", "api-key", "-"], { env: e, stdin: `${KEY}\n` });
    expect(set.code).toBe(0);
    expect(set.stderr).toContain("sk_l…CRET");
    const path = (await runCli(["config", "path"], { env: e })).stdout.trim();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, "utf8")).profiles.default["api-key"]).toBe(KEY);
    const list = await runCli(["config", "list"], { env: e });
    const get = await runCli(["config", "get", "api-key"], { env: e });
    for (const out of [set, list, get]) expect(out.stdout + out.stderr).not.toContain(KEY);
    expect(list.stdout).toContain("api-key\tsk_l…CRET\tprofile default");
    expect(get.stdout.trim()).toBe("sk_l…CRET");
  });

  it("reads the API key from stdin when no value is given and stdin is not a terminal", async () => {
    const e = env();
    expect((await runCli(["config", "set", "api-key"], { env: e, stdin: KEY })).code).toBe(0);
    expect((await runCli(["config", "get", "api-key", "--json"], { env: e })).stdout).toBe('{"key":"api-key","value":"sk_l…CRET"}\n');
  });

  it("refuses an API key given on the command line (exit 2)", async () => {
    const out = await runCli(["config", "set", "api-key", KEY], { env: env() });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("shell history");
    expect(out.stderr).not.toContain(KEY);
  });

  it("sets, gets, lists and unsets settings per profile", async () => {
    const e = env();
    expect((await runCli(["config", "set", "base-url", "https://api.example.com/"], { env: e })).code).toBe(0);
    expect((await runCli(["config", "set", "max-task-size", "100000", "--profile", "prod"], { env: e })).code).toBe(0);
    expect((await runCli(["config", "get", "base-url"], { env: e })).stdout).toBe("https://api.example.com\n");
    expect((await runCli(["config", "get", "max-task-size"], { env: { ...e, BULKCHECK_PROFILE: "prod" } })).stdout).toBe("100000\n");
    const json = JSON.parse((await runCli(["config", "list", "--json"], { env: e })).stdout);
    expect(json).toMatchObject({
      profile: "default",
      settings: { "base-url": { value: "https://api.example.com", source: "profile default", default: null } },
    });
    expect((await runCli(["config", "unset", "base-url"], { env: e })).code).toBe(0);
    const missing = await runCli(["config", "get", "base-url"], { env: e });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("bulkcheck config set base-url");
  });

  it("lists every setting with the value in force, its source and its default", async () => {
    const e = env();
    expect((await runCli(["config", "set", "max-task-size", "100000"], { env: e })).code).toBe(0);
    const table = await runCli(["config", "list"], { env: { ...e, BULKCHECK_API_KEY: KEY } });
    const rows = table.stdout.split("\n").slice(1).filter(Boolean);
    expect(rows).toContain("min-task-size\t500\tdefault\t500");
    expect(rows).toContain("max-task-size\t100000\tprofile default\t500000");
    expect(rows).toContain("api-key\tsk_l…CRET\tenvironment (BULKCHECK_API_KEY)\t");
    expect(rows).toContain("base-url\t\tnot set\t");
    expect(rows).toContain("price.carrier_batch\t0.001\tdefault\t0.001");
    const json = JSON.parse((await runCli(["config", "list", "--json"], { env: e })).stdout);
    expect(Object.keys(json.settings)).toHaveLength(rows.length);
    expect(json.settings["max-in-flight"]).toEqual({ value: "5", source: "default", default: "5" });
  });

  it("shows environment overrides in config list", async () => {
    const out = await runCli(["config", "list"], { env: { ...env(), BULKCHECK_BASE_URL: "https://env.example" } });
    expect(out.stdout).toContain("base-url\thttps://env.example\tenvironment (BULKCHECK_BASE_URL)");
  });

  it("says which of the profile's settings a variable of the shell overrides, and never calls that profile empty", async () => {
    const e = env();
    await runCli(["config", "set", "base-url", "http://127.0.0.1:8787", "--profile", "sandbox"], { env: e });
    await runCli(["config", "set", "api-key", "-", "--profile", "sandbox"], { env: e, stdin: KEY });
    const shell = { ...e, BULKCHECK_BASE_URL: "https://env.example", BULKCHECK_API_KEY: "sk_other_0000000000000000" };
    const out = await runCli(["config", "list", "--profile", "sandbox"], { env: shell });
    expect(out.stdout).toContain("base-url\thttps://env.example\tenvironment (BULKCHECK_BASE_URL)");
    expect(out.stderr).toContain(
      'Profile "sandbox" sets base-url to http://127.0.0.1:8787, and BULKCHECK_BASE_URL overrides it while it is set: unset BULKCHECK_BASE_URL to use the profile\'s.',
    );
    expect(out.stderr).toContain('Profile "sandbox" sets api-key to sk_l…CRET, and BULKCHECK_API_KEY overrides it');
    expect(out.stderr).not.toContain("no settings of its own");
    expect(out.stdout + out.stderr).not.toContain(KEY);
    const json = JSON.parse((await runCli(["config", "list", "--profile", "sandbox", "--json"], { env: shell })).stdout);
    expect(json.settings["base-url"]).toEqual({
      value: "https://env.example",
      source: "environment",
      default: null,
      variable: "BULKCHECK_BASE_URL",
      profile_value: "http://127.0.0.1:8787",
    });
    // BULKCHECK_STORE_URL overrides the store the same way (its password never shown).
    const store = await runCli(["config", "list"], { env: { ...e, BULKCHECK_STORE_URL: "postgres://team:pw@db.example/bulkcheck" } });
    expect(store.stdout).toContain("store\tpostgres://team@db.example/bulkcheck\tenvironment (BULKCHECK_STORE_URL)");
  });

  it("rejects an unknown setting and a bad value with exit 2", async () => {
    expect((await runCli(["config", "set", "colour", "red"], { env: env() })).code).toBe(2);
    const bad = await runCli(["config", "set", "min-task-size", "many"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("positive whole number");
  });
});

describe("the command line", () => {
  it("prints the version and help with exit 0", async () => {
    const version = await runCli(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit codes:");
    expect(help.stdout).toContain("130  interrupted");
  });

  it("maps usage errors to exit 2", async () => {
    expect((await runCli(["frobnicate"])).code).toBe(2);
    expect((await runCli(["submit", "list.txt"])).code).toBe(2);
    expect((await runCli(["wait"])).code).toBe(2);
    expect((await runCli(["status", "--limit", "zero"])).code).toBe(2);
  });

  it("says how to set a missing base URL (exit 2) and a missing key (exit 4)", async () => {
    const e = env();
    const noUrl = await runCli(["balance"], { env: e });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain("bulkcheck config set base-url");
    const noKey = await runCli(["balance"], { env: { ...e, BULKCHECK_BASE_URL: "http://127.0.0.1:9" } });
    expect(noKey.code).toBe(4);
    expect(noKey.stderr).toContain("bulkcheck config set api-key");
  });

  it("refuses a malformed task id before any request (exit 2)", async () => {
    const out = await runCli(["status", "not/an/id"], {
      env: { ...env(), BULKCHECK_BASE_URL: "http://127.0.0.1:9", BULKCHECK_API_KEY: "k" },
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("is not a task id");
  });
});
