import { execFile } from "node:child_process";
import { mkdirSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { BIN } from "../helpers/cli.js";
import { e2eSandboxes, listText, submitArgs, type E2e } from "../helpers/sandbox.js";

/** Issue 14: `bulkcheck completion bash|zsh|fish`, the bash script exercised in a real bash. */
const sandbox = e2eSandboxes();
// Real processes, some in a pseudo-terminal: generous, for a machine busy with other work.
vi.setConfig({ testTimeout: 120_000 });
const run = promisify(execFile);

/**
 * Sources the bash script (as a user's shell would) and completes `line` as if
 * TAB were pressed at its end; returns COMPREPLY. `bulkcheck` on the PATH is the
 * built binary, which the script calls for the journal's task ids.
 */
async function complete(e: E2e, script: string, line: string): Promise<string[]> {
  const words = line.split(" ");
  const bash = [
    `source ${JSON.stringify(script)}`,
    `COMP_WORDS=(${words.map((word) => JSON.stringify(word)).join(" ")})`,
    `COMP_CWORD=${words.length - 1}`,
    "_bulkcheck",
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join("\n");
  const { stdout } = await run("bash", ["--norc", "-c", bash], { env: pathWithBulkcheck(e) });
  return stdout.split("\n").filter(Boolean);
}

function pathWithBulkcheck(e: E2e): Record<string, string> {
  const bin = join(e.dir, "bin");
  mkdirSync(bin, { recursive: true });
  try {
    symlinkSync(BIN, join(bin, "bulkcheck"));
  } catch {
    // already linked by an earlier call
  }
  return { ...e.env, HOME: e.dir, PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ""}` };
}

describe("bulkcheck completion", () => {
  it("gives bash commands, flags, --type values and the journal's task ids", async () => {
    const e = await sandbox();
    const id = (await e.run(submitArgs(e.file("list.txt", listText(500)), "--quiet"))).stdout.trim();
    const printed = await e.run(["completion", "bash"]);
    expect(printed.code).toBe(0);
    const script = e.file("bulkcheck.bash", printed.stdout);

    const registered = await run("bash", ["--norc", "-c", `source ${JSON.stringify(script)}; complete -p bulkcheck`]);
    expect(registered.stdout.trim()).toBe("complete -o default -F _bulkcheck bulkcheck");

    expect(await complete(e, script, "bulkcheck s")).toEqual(["submit", "status", "store", "sandbox"]);
    expect(await complete(e, script, "bulkcheck help ex")).toEqual(["exit-codes"]);
    expect(await complete(e, script, "bulkcheck submit list.txt --dry")).toEqual(["--dry-run"]);
    expect(await complete(e, script, "bulkcheck submit list.txt --type carr")).toEqual(["carrier_batch"]);
    expect(await complete(e, script, "bulkcheck download x --format j")).toEqual(["jsonl", "json"]);
    expect(await complete(e, script, "bulkcheck --profile default wait ")).toEqual([id]);
    expect(await complete(e, script, "bulkcheck report ")).toEqual([id]);
    expect(await complete(e, script, `bulkcheck status ${id.slice(0, 6)}`)).toEqual([id]);
    expect(await complete(e, script, "bulkcheck config u")).toEqual(["unset"]);
  });

  it("prints zsh and fish scripts with the same commands, and refuses an unknown shell", async () => {
    const e = await sandbox();
    const zsh = await e.run(["completion", "zsh"]);
    expect(zsh.stdout).toMatch(/^#compdef bulkcheck\n/);
    expect(zsh.stdout).toContain("compdef _bulkcheck bulkcheck");
    const fish = await e.run(["completion", "fish"]);
    expect(fish.stdout).toContain("complete -c bulkcheck -n __fish_use_subcommand -a retry-failed");
    expect(fish.stdout).toContain("-l type -r -xa 'number_validation_batch");
    for (const script of [zsh.stdout, fish.stdout]) expect(script).toContain("bulkcheck completion --task-ids");
    const unknown = await e.run(["completion", "tcsh"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No completion for the shell "tcsh".');
  });
});
