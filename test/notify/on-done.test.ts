import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runHook, type HookCommand } from "../../src/notify/on-done.js";
import { tempDir } from "../helpers/cli.js";

/** Runs `argv` as an --on-done command would be run, with what it printed. */
async function run(argv: string[], options: Partial<HookCommand> = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk: Buffer) => (out += String(chunk)));
  stderr.on("data", (chunk: Buffer) => (err += String(chunk)));
  const end = await runHook({
    argv,
    cwd: tempDir(),
    env: { PATH: process.env.PATH, ANSWER: "42" },
    input: '{"a":1}\n',
    withinMs: 10_000,
    signal: new AbortController().signal,
    stdout,
    stderr,
    ...options,
  });
  return { end, out, err };
}

const node = (script: string) => [process.execPath, "-e", script];

describe("an --on-done command", () => {
  it("gets the input on stdin and the environment given, and its output goes where it is sent", async () => {
    const { end, out, err } = await run(
      node(
        "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{console.log(s.trim()+' '+process.env.ANSWER);console.error('e');process.exit(3)})",
      ),
    );
    expect(end).toEqual({ type: "exited", code: 3 });
    expect(out).toBe('{"a":1} 42\n');
    expect(err).toBe("e\n");
  });

  it("says so when the program does not exist", async () => {
    const { end } = await run(["/nonexistent/bulkcheck-hook"]);
    expect(end.type).toBe("not-started");
  });

  it("is stopped with what it started once its time runs out", async () => {
    const started = Date.now();
    // A shell whose child sleeps: stopping the shell alone would leave the sleep holding the output open.
    const { end } = await run(["sh", "-c", "sleep 30; echo late"], { withinMs: 300 });
    // SIGTERM a fifth of its time before the end.
    expect(end).toEqual({ type: "timed-out", afterMs: 240 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("is stopped at once when bulkcheck is (Ctrl-C)", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const { end } = await run(["sh", "-c", "sleep 30"], { signal: controller.signal });
    expect(end).toEqual({ type: "stopped" });
  });

  it("does not wait for what it left running in the background", async () => {
    const started = Date.now();
    const { end } = await run(["sh", "-c", "sleep 3 & echo started"]);
    expect(end).toEqual({ type: "exited", code: 0 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
