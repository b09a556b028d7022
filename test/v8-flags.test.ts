import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const flagsModule = fileURLToPath(new URL("../dist/v8-flags.js", import.meta.url));
const preamble = `const { tuneV8, V8_TUNING } = await import(${JSON.stringify(flagsModule)});`;

/** Runs `body` in a fresh Node with `tuneV8` and `V8_TUNING` in scope; returns its stdout. */
function inFreshNode(body: string): string {
  return execFileSync(process.execPath, ["--input-type=module", "-e", `${preamble}\n${body}`], { encoding: "utf8" });
}

describe("V8 tuning", () => {
  it("uses only flags this V8 knows (an unknown one prints an error on every run)", () => {
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", `${preamble}\nfor (const flag of Object.values(V8_TUNING)) tuneV8(flag);`], { encoding: "utf8" });
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: "", stderr: "" });
  });

  it("keeps the young generation at its initial size through preparation-like allocation", () => {
    const churn = `
      const { getHeapSpaceStatistics } = await import("node:v8");
      const window = [];
      for (let i = 0; i < 2e6; i++) { window.push({ i, s: "x" + i }); if (window.length > 20000) window.splice(0, 10000); }
      console.log(getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_size / 1048576);`;
    const untuned = Number(inFreshNode(churn));
    const tuned = Number(inFreshNode(`tuneV8(V8_TUNING.preparation);${churn}`));
    expect(untuned).toBeGreaterThanOrEqual(16);
    expect(tuned).toBeLessThanOrEqual(4);
  });
});
