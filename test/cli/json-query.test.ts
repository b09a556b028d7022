import { describe, expect, it } from "vitest";
import { runCli, tempDir } from "../helpers/cli.js";

/** `--json --query EXPR config list`: a command that needs no service, so only the expression decides how it ends. */
async function listWith(expression: string) {
  const out = await runCli(["--json", "--query", expression, "config", "list"], { env: { BULKCHECK_CONFIG_DIR: tempDir() } });
  const error = out.code === 0 ? undefined : (JSON.parse(out.stderr) as { error: { message: string; hint: string } }).error;
  return { ...out, message: `${error?.message}\n${error?.hint}` };
}

describe("--query's limits (issue 35, point 8)", () => {
  it.each([
    ["3,000 ! deep", "!".repeat(3000) + "profile"],
    ["3,000 function calls deep", "abs(".repeat(3000) + "profile" + ")".repeat(3000)],
    ["3,000 filters deep", "a[?".repeat(3000) + "b" + "]".repeat(3000)],
  ])("refuses an expression nested %s as a usage error naming the limits, never as a bug", async (_name, expression) => {
    const out = await listWith(expression);
    expect(out.code, out.stderr).toBe(2);
    expect(out.message).toContain("characters long.");
    expect(out.message).toContain("bulkcheck takes an expression of at most 1,000 characters, nested at most 100 levels deep.");
  });

  it("refuses an expression within the length but nested deeper than 100 levels, before the command runs", async () => {
    const out = await listWith("!".repeat(150) + "profile");
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.message).toContain("nests more than 100 levels deep.");
  });

  it("takes an expression at the limits", async () => {
    const out = await listWith("!".repeat(98) + "profile");
    expect(out).toMatchObject({ code: 0, stdout: "true\n" });
  });

  it("never echoes a long expression back: a message quotes its first 60 characters", async () => {
    for (const expression of ["a.".repeat(5000) + "[", "a.".repeat(400) + "[", "a.".repeat(400) + "nope(profile)"]) {
      const out = await listWith(expression);
      expect(out.code).toBe(2);
      expect(out.message).toContain(`--query "${"a.".repeat(29)}a…"`);
      expect(out.stderr.length).toBeLessThan(600);
    }
  });
});
