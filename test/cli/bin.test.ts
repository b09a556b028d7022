import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import * as nodeModule from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN, runBin, tempDir } from "../helpers/cli.js";

/** bin/bulkcheck.js runs the bundle in dist/bundle (built by `npm test`). */
const SAMPLE = fileURLToPath(new URL("../../examples/contacts.csv", import.meta.url));
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

/**
 * The files of dist/bundle that `bulkcheck ...argv` loads, by name, and its exit code:
 * bin/bulkcheck.js is required by a script that lists Node's module cache as it exits.
 */
function bundlesLoaded(argv: string[]): { code: number | null; bundles: string[] } {
  const script = `process.argv.splice(1, 0, ${JSON.stringify(BIN)});
process.on("exit", () => require("node:fs").writeSync(3, JSON.stringify(Object.keys(require.cache).filter((file) => file.includes("/dist/bundle/")).map((file) => require("node:path").basename(file)).sort())));
require(${JSON.stringify(BIN)});`;
  const run = spawnSync(process.execPath, ["-e", script, "--", ...argv], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "ignore", "pipe"],
  });
  return { code: run.status, bundles: JSON.parse((run.output[3] as string) || "null") as string[] };
}

describe("the bin", () => {
  it("prints the package's version", async () => {
    expect(await runBin(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
  });

  it("prints the help, which lists every command", async () => {
    const { code, stdout } = await runBin(["--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: bulkcheck /);
    for (const command of ["submit", "status", "wait", "download", "balance", "config", "validate", "retry-failed", "sandbox", "demo"]) {
      expect(stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    }
  });

  it("answers --version and a command's --help from the start-up bundle alone, and loads the rest when a command runs", () => {
    expect(bundlesLoaded(["--version"])).toEqual({ code: 0, bundles: ["bulkcheck.cjs"] });
    expect(bundlesLoaded(["status", "--help"])).toEqual({ code: 0, bundles: ["bulkcheck.cjs"] });
    expect(bundlesLoaded(["validate", SAMPLE, "--country", "GB"])).toEqual({
      code: 0,
      bundles: ["bulkcheck-actions.cjs", "bulkcheck.cjs"],
    });
  });

  it("gives SIGTERM back to Node once the command has returned: a process something kept alive still stops", () => {
    const bundle = fileURLToPath(new URL("../../dist/bundle/bulkcheck.cjs", import.meta.url));
    const script = `setInterval(() => {}, 1000); // what a command might leave running
require(${JSON.stringify(bundle)}).main(["--version"]).then(() => process.kill(process.pid, "SIGTERM"));`;
    const run = spawnSync(process.execPath, ["-e", script], { stdio: "ignore", timeout: 20_000, killSignal: "SIGKILL" });
    expect(run.signal).toBe("SIGTERM");
  });

  it("keeps Node's compile cache (Node 22.1 on) in the user's cache directory: never in $TMPDIR, nor where a relative XDG_CACHE_HOME points", async () => {
    const [home, cache, tmp, cwd] = [tempDir(), tempDir(), tempDir(), tempDir()];
    const cached = "enableCompileCache" in nodeModule;
    const cacheIn = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
    for (const xdgCacheHome of [cache, "relative"]) {
      const out = await runBin(["--version"], { cwd, env: { HOME: home, XDG_CACHE_HOME: xdgCacheHome, TMPDIR: tmp } });
      expect(out.code, out.stderr).toBe(0);
    }
    expect(cacheIn(join(cache, "bulkcheck", "node-compile-cache")).length > 0).toBe(cached);
    // The relative one is ignored, as the XDG base directories say: HOME's .cache instead.
    expect(cacheIn(join(home, ".cache", "bulkcheck", "node-compile-cache")).length > 0).toBe(cached);
    expect(readdirSync(tmp)).toEqual([]);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("exits 2 on an unknown command", async () => {
    const { code, stderr } = await runBin(["no-such-command"]);
    expect(code).toBe(2);
    expect(stderr).toContain("unknown command 'no-such-command'");
  });

  it("validates the sample list in this thread and on worker threads alike (the worker script sits beside the bundle)", async () => {
    const [inThread, onWorkers] = await Promise.all([
      runBin(["validate", SAMPLE, "--country", "GB", "--json"]),
      runBin(["validate", SAMPLE, "--country", "GB", "--json", "--threads", "2"]),
    ]);
    expect([inThread.code, onWorkers.code]).toEqual([0, 0]);
    expect(JSON.parse(inThread.stdout).kept).toBeGreaterThan(0);
    expect(onWorkers.stdout).toBe(inThread.stdout);
  });

  it("says how to build it, without a stack trace, in a clone that has not been built", () => {
    const clone = tempDir();
    mkdirSync(join(clone, "bin"));
    for (const name of ["bulkcheck.js", "package.json"]) copyFileSync(join(dirname(BIN), name), join(clone, "bin", name));
    const run = spawnSync(process.execPath, [join(clone, "bin", "bulkcheck.js"), "--version"], { encoding: "utf8" });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      "error: bulkcheck is not built here yet (dist/bundle/bulkcheck.cjs is missing).\nBuild it with: npm run build\n",
    );
  });
});
