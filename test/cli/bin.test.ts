import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runBin } from "../helpers/cli.js";

/** bin/bulkcheck.js runs the bundle in dist/bundle (built by `npm test`). */
const SAMPLE = fileURLToPath(new URL("../../examples/contacts.csv", import.meta.url));
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

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
});
