import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BIN, tempDir } from "../helpers/cli.js";

const dist = new URL("../../dist/", import.meta.url);
const loader = createRequire(import.meta.url)("../../bin/startup-loader.js") as {
  IMPORT_PARAMETER: string;
  startupCacheAccepted(): boolean;
};

describe("the start-up bundle", () => {
  const bundle = readFileSync(new URL("startup.cjs", dist), "utf8");

  it("comes with a code cache this Node accepts", () => {
    expect(loader.startupCacheAccepted()).toBe(true);
  });

  it("leaves only ES-module packages to import(), and calls it through the loader", () => {
    const lazy = [...bundle.matchAll(new RegExp(`${loader.IMPORT_PARAMETER}\\("([^"]+)"\\)`, "g"))].map((match) => match[1]!);
    expect(lazy.sort()).toEqual(["conf", "ora"]);
    expect(bundle).not.toMatch(/\bimport\s*\(/);
  });

  it("answers a command's help without loading child_process (commander needs it only for executable subcommands)", () => {
    const script = `
      const { loadMain } = require(${JSON.stringify(fileURLToPath(new URL("../../bin/startup-loader.js", import.meta.url)))});
      const { PassThrough } = require("node:stream");
      loadMain().then(async (main) => {
        const out = new PassThrough();
        let help = "";
        out.on("data", (chunk) => (help += chunk));
        const io = { stdin: process.stdin, stdout: out, stderr: out };
        const runtime = { io, env: {}, now: Date.now, sleep: async () => {}, random: Math.random, signal: new AbortController().signal, cwd: process.cwd() };
        const code = await main(["status", "--help"], runtime);
        const loaded = process.moduleLoadList.filter((name) => name.includes("child_process"));
        console.log(JSON.stringify({ code, usage: help.split("\\n")[0], loaded }));
      });`;
    const result = JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }));
    expect(result).toEqual({ code: 0, usage: "Usage: bulkcheck status [options] [ids...]", loaded: [] });
  });

  it("is what the bin runs", () => {
    expect(execFileSync(process.execPath, [BIN, "status", "--help"], { encoding: "utf8" })).toMatch(/^Usage: bulkcheck status/);
  });

  it("falls back to dist/main.js where there is no bundle (a build by tsc alone)", () => {
    const root = tempDir();
    const [bin, realBin, realDist] = [join(root, "bin"), fileURLToPath(new URL("../../bin/", import.meta.url)), fileURLToPath(dist)];
    mkdirSync(bin);
    for (const name of ["bulkcheck.js", "startup-loader.js", "package.json"]) copyFileSync(join(realBin, name), join(bin, name));
    mkdirSync(join(root, "dist"));
    for (const name of readdirSync(realDist)) if (!name.startsWith("startup.")) symlinkSync(join(realDist, name), join(root, "dist", name));
    expect(execFileSync(process.execPath, [join(bin, "bulkcheck.js"), "status", "--help"], { encoding: "utf8" })).toMatch(/^Usage: bulkcheck status/);
  });
});
