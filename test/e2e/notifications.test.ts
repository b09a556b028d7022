import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_PRICE_MICROS } from "../../src/spec/products.js";
import { runBin, spawnCli, tempDir } from "../helpers/cli.js";
import { createTestDatabase } from "../helpers/postgres.js";
import {
  e2eSandboxes,
  lines,
  listText,
  storedRuns,
  submitArgs,
  submitAs,
  until,
  WAITING,
  WEBHOOK_SECRET,
  type E2e,
} from "../helpers/sandbox.js";
import { runInTerminal } from "../helpers/terminal.js";
import { FULL_TASK, sendEnvelope, startServer } from "../api/scripted-server.js";
import { startReceiver, type ReceivedDelivery, type Receiver } from "../helpers/webhook-receiver.js";

/**
 * Telling someone how a command ended (issue 30, points 1 and 2): --on-done runs a command
 * with the outcome in its environment and on its stdin, --notify posts it signed as Standard
 * Webhooks says; neither changes the exit code.
 */
const sandbox = e2eSandboxes();
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

const DOCS = readFileSync(new URL("../../docs/notifications.md", import.meta.url), "utf8");

/** The code block in `language` under `heading` of docs/notifications.md. */
function docsCode(heading: string, language: string): string {
  const section = DOCS.slice(DOCS.indexOf(`\n${heading}\n`));
  const code = new RegExp("```" + language + "\\n([\\s\\S]*?)```").exec(section)?.[1];
  if (!code) throw new Error(`docs/notifications.md has no ${language} block under ${heading}`);
  return code;
}

interface NodeRecipe {
  verifyWebhook(secret: string, headers: Record<string, string>, body: string, nowMs?: number): unknown;
  handledBefore(id: string, nowMs?: number): boolean;
  markHandled(id: string, nowMs?: number): void;
}

/** The Node recipe of the docs, exactly as written there, as a module of its own (its memory of ids is fresh). */
async function nodeRecipe(): Promise<NodeRecipe> {
  const path = join(tempDir(), "verify.mjs");
  writeFileSync(path, docsCode("### Verifying in Node", "js"));
  return (await import(pathToFileURL(path).href)) as NodeRecipe;
}

const PYTHON = spawnSync("python3", ["--version"]).status === 0;

/** The Python recipe of the docs, exactly as written there, run on a delivery; what it returned, or its error. */
function pythonVerify(delivery: ReceivedDelivery, nowSeconds: number): { summary?: unknown; error?: string } {
  const dir = tempDir();
  writeFileSync(join(dir, "verify.py"), docsCode("### Verifying in Python", "python"));
  const driver = [
    "import json, sys",
    `sys.path.insert(0, ${JSON.stringify(dir)})`,
    "from verify import verify_webhook",
    "given = json.load(sys.stdin)",
    "print(json.dumps(verify_webhook(given['secret'], given['headers'], given['body'].encode(), given['now'])))",
  ].join("\n");
  const run = spawnSync("python3", ["-c", driver], {
    input: JSON.stringify({ secret: WEBHOOK_SECRET, headers: delivery.headers, body: delivery.body, now: nowSeconds }),
    encoding: "utf8",
  });
  return run.status === 0 ? { summary: JSON.parse(run.stdout) as unknown } : { error: run.stderr };
}

/** A hook that writes the BULKCHECK_* variables it got (but those bulkcheck reads) and its stdin to `seen.json`, then exits with its argument. */
const HOOK = `import { writeFileSync } from "node:fs";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const read = ["BULKCHECK_API_KEY", "BULKCHECK_BASE_URL", "BULKCHECK_CONFIG_DIR", "BULKCHECK_WEBHOOK_SECRET"];
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("BULKCHECK_") && !read.includes(name)));
writeFileSync("seen.json", JSON.stringify({ env, summary: JSON.parse(input) }));
process.exit(Number(process.argv[2]));
`;

/** --on-done running HOOK in `e`'s directory, exiting with `exitCode`. */
function onDone(e: E2e, exitCode: number): string[] {
  e.file("hook.mjs", HOOK);
  return ["--on-done", `"${process.execPath}" hook.mjs ${exitCode}`];
}

interface Seen {
  env: Record<string, string>;
  summary: { type: string; version: number; timestamp: string; data: Record<string, unknown> };
}

function seen(e: E2e): Seen {
  return JSON.parse(readFileSync(join(e.dir, "seen.json"), "utf8")) as Seen;
}

/** A task of 500 numbers submitted without waiting; its id. */
async function submitted(e: E2e): Promise<string> {
  const list = e.file("list.txt", listText(500));
  const out = await e.run(submitArgs(list));
  expect(out.code, out.stderr).toBe(0);
  return out.stdout.trim();
}

/** A task of 500 numbers, finished (or failed); its id. */
async function finished(e: E2e): Promise<string> {
  const id = await submitted(e);
  await e.run(["wait", id, "--interval", "0.2"]);
  return id;
}

const PRICE = DEFAULT_PRICE_MICROS.number_validation_batch;

describe("--on-done", () => {
  it("gets bulkcheck's environment without the webhook secret, and the store URL without its password (issue 35, point 6)", async () => {
    const e = await sandbox();
    const storeUrl = await createTestDatabase();
    const password = new URL(storeUrl).password;
    expect(password).not.toBe("");
    const env = { BULKCHECK_STORE_URL: storeUrl, BULKCHECK_WEBHOOK_SECRET: WEBHOOK_SECRET, KEPT_BY_THE_HOOK: "yes" };
    const id = await finished(e);
    e.file("env-hook.mjs", 'import { writeFileSync } from "node:fs";\nwriteFileSync("hook-env.json", JSON.stringify(process.env));\n');
    const out = await e.run(["wait", id, "--on-done", `"${process.execPath}" env-hook.mjs`], { env });
    expect(out.code, out.stderr).toBe(0);
    const hookEnv = JSON.parse(readFileSync(join(e.dir, "hook-env.json"), "utf8")) as Record<string, string>;
    expect(hookEnv).not.toHaveProperty("BULKCHECK_WEBHOOK_SECRET");
    const passed = new URL(hookEnv.BULKCHECK_STORE_URL!);
    expect(passed.password).toBe("");
    expect(`${passed.username}@${passed.host}${passed.pathname}`).toBe(
      `${new URL(storeUrl).username}@${new URL(storeUrl).host}${new URL(storeUrl).pathname}`,
    );
    for (const value of Object.values(hookEnv)) {
      expect(value).not.toContain(password);
      expect(value).not.toContain(WEBHOOK_SECRET);
    }
    // What a bulkcheck in the hook needs to reach the service, and the user's own variables, pass as they are.
    expect(hookEnv).toMatchObject({
      BULKCHECK_API_KEY: e.env.BULKCHECK_API_KEY,
      BULKCHECK_BASE_URL: e.env.BULKCHECK_BASE_URL,
      KEPT_BY_THE_HOOK: "yes",
    });
  });

  it("gets the documented variables and JSON when submit --wait succeeds, and its own exit 3 leaves bulkcheck's 0", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const out = await e.run(submitArgs(list, ...WAITING, "-o", "out.csv", ...onDone(e, 3)));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("warning: the --on-done command");
    expect(out.stderr).toContain("exited with 3; the exit code stays 0.");
    const [run] = await storedRuns(e);
    const task = run!.tasks[0]!.taskId!;
    const { env, summary } = seen(e);
    expect(env).toEqual({
      BULKCHECK_EXIT: "0",
      BULKCHECK_STATUS: "ok",
      BULKCHECK_COMMAND: "submit",
      BULKCHECK_RUN: run!.id,
      BULKCHECK_TASKS: task,
      BULKCHECK_OUTPUT: join(e.dir, "out.csv"),
      BULKCHECK_CHANGES: "0",
      BULKCHECK_APPEARED: "",
      BULKCHECK_LEFT: "",
      BULKCHECK_CHARGED_USD: String((500 * PRICE) / 1e6),
      BULKCHECK_ERROR: "",
    });
    expect(summary).toMatchObject({ type: "bulkcheck.command.ended", version: 1 });
    expect(summary.data).toMatchObject({
      command: "submit",
      exit_code: 0,
      status: "ok",
      error: null,
      profile: "default",
      run: run!.id,
      tasks: [task],
      output: join(e.dir, "out.csv"),
      changes: { changed: 0, compared: 0, appeared: null, left: null, since_run: null },
      charged_micros: 500 * PRICE,
      charged_usd: (500 * PRICE) / 1e6,
    });
  });

  it("gets exit 6 and the failed task when a task fails, and cannot turn it into a success", async () => {
    const e = await sandbox({ failRate: 1 });
    const list = e.file("list.txt", listText(500));
    const out = await e.run(submitArgs(list, ...WAITING, "-o", "out.csv", ...onDone(e, 0)));
    expect(out.code, out.stderr).toBe(6);
    const [run] = await storedRuns(e);
    const task = run!.tasks[0]!.taskId!;
    const { env, summary } = seen(e);
    expect(env).toMatchObject({
      BULKCHECK_EXIT: "6",
      BULKCHECK_STATUS: "task_failed",
      BULKCHECK_RUN: run!.id,
      BULKCHECK_TASKS: task,
      BULKCHECK_OUTPUT: "",
      BULKCHECK_CHARGED_USD: "",
      BULKCHECK_ERROR: expect.stringContaining(`1 task(s) failed: ${task}.`),
    });
    expect(summary.data).toMatchObject({
      exit_code: 6,
      status: "task_failed",
      error: { code: "task_failed", message: expect.stringContaining(`1 task(s) failed: ${task}.`) },
      tasks: [task],
      charged_micros: null,
    });
  });

  it("gets exit 8 when wait's --timeout runs out", async () => {
    const e = await sandbox({ numbersPerSecond: 1 });
    const id = await submitted(e);
    const out = await e.run(["wait", id, "--interval", "0.2", "--timeout", "3", ...onDone(e, 0)]);
    expect(out.code, out.stderr).toBe(8);
    const { env, summary } = seen(e);
    expect(env).toMatchObject({
      BULKCHECK_EXIT: "8",
      BULKCHECK_STATUS: "pending",
      BULKCHECK_COMMAND: "wait",
      BULKCHECK_TASKS: id,
      BULKCHECK_RUN: "",
    });
    expect(summary.data).toMatchObject({ exit_code: 8, status: "pending", error: { code: "pending" }, tasks: [id], run: null });
  });

  it("runs after retry-failed --wait too, with its run and the task it submitted", async () => {
    const e = await sandbox({ failRate: 1 });
    const failed = await finished(e);
    const out = await e.run(["retry-failed", failed, "--yes", "--wait", "--interval", "0.2", "-o", "again.csv", ...onDone(e, 0)]);
    expect(out.code, out.stderr).toBe(6);
    const retried = e
      .state()
      .tasks.map((task) => task.id)
      .find((id) => id !== failed)!;
    const { env, summary } = seen(e);
    expect(env).toMatchObject({
      BULKCHECK_COMMAND: "retry-failed",
      BULKCHECK_EXIT: "6",
      BULKCHECK_STATUS: "task_failed",
      BULKCHECK_RUN: expect.stringMatching(/^\d{8}-\d{6}-[0-9a-f]{6}$/),
      BULKCHECK_TASKS: retried,
    });
    expect(summary.data).toMatchObject({ command: "retry-failed", exit_code: 6, run: env.BULKCHECK_RUN, tasks: [retried] });
  });

  it("is the profile's default with config set on-done, and --no-on-done skips it", async () => {
    const e = await sandbox();
    const id = await finished(e);
    e.file("hook.mjs", HOOK);
    expect((await e.run(["config", "set", "on-done", `"${process.execPath}" hook.mjs 0`])).code).toBe(0);
    const skipped = await e.run(["download", id, "-o", "a.csv", "--no-on-done"]);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(existsSync(join(e.dir, "seen.json"))).toBe(false);
    const out = await e.run(["download", id, "-o", "b.csv"]);
    expect(out.code, out.stderr).toBe(0);
    expect(seen(e).env).toMatchObject({ BULKCHECK_COMMAND: "download", BULKCHECK_OUTPUT: join(e.dir, "b.csv"), BULKCHECK_EXIT: "0" });
  });

  it("needs --wait on submit (exit 2, nothing uploaded), and the profile's is not run without it", async () => {
    const e = await sandbox();
    const list = e.file("list.txt", listText(500));
    const refused = await e.run(submitArgs(list, ...onDone(e, 0)));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--on-done needs --wait");
    expect(e.state().tasks).toHaveLength(0);
    expect((await e.run(["config", "set", "on-done", `"${process.execPath}" hook.mjs 0`])).code).toBe(0);
    const out = await e.run(submitArgs(list));
    expect(out.code, out.stderr).toBe(0);
    expect(existsSync(join(e.dir, "seen.json"))).toBe(false);
  });

  it("runs without a shell unless one is asked for, and the built binary's exit code stays its own", async () => {
    const e = await sandbox({ fakeClock: false });
    const id = await submitted(e);
    const out = await e.bin([
      "wait",
      id,
      "--interval",
      "0.2",
      "--on-done",
      'sh -c "echo $BULKCHECK_EXIT $BULKCHECK_STATUS $BULKCHECK_TASKS > seen.txt; exit 4"',
    ]);
    expect(out.code, out.stderr).toBe(0);
    expect(readFileSync(join(e.dir, "seen.txt"), "utf8")).toBe(`0 ok ${id}\n`);
    expect(out.stderr).toContain("warning: the --on-done command sh exited with 4; the exit code stays 0.");
    const literal = await e.bin([
      "wait",
      id,
      "--on-done",
      `"${process.execPath}" -e "require('fs').writeFileSync('arg.txt', process.argv[1])" $HOME`,
    ]);
    expect(literal.code, literal.stderr).toBe(0);
    expect(readFileSync(join(e.dir, "arg.txt"), "utf8")).toBe("$HOME");
  });
});

describe("--notify", () => {
  async function withSecret(e: E2e): Promise<void> {
    const set = await e.run(["config", "set", "webhook-secret", "-"], { stdin: `${WEBHOOK_SECRET}\n` });
    expect(set.code, set.stderr).toBe(0);
  }

  it("posts the summary signed so that the documented Node and Python recipes verify it, and a replay is told apart", async () => {
    const e = await sandbox();
    await withSecret(e);
    const recipe = await nodeRecipe();
    const handled: unknown[] = [];
    const replays: string[] = [];
    const receiver = await startReceiver((delivery) => {
      const summary = recipe.verifyWebhook(WEBHOOK_SECRET, delivery.headers, delivery.body, e.clock.ms);
      const id = delivery.headers["webhook-id"]!;
      if (recipe.handledBefore(id, e.clock.ms)) replays.push(id);
      else {
        recipe.markHandled(id, e.clock.ms);
        handled.push(summary);
      }
      return 200;
    });
    receivers.push(receiver);
    const id = await finished(e);
    const out = await e.run(["download", id, "-o", "out.csv", "--notify", receiver.url]);
    expect(out.code, out.stderr).toBe(0);
    const [delivery] = receiver.deliveries;
    expect(receiver.deliveries).toHaveLength(1);
    expect(delivery!.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(Number(delivery!.headers["webhook-timestamp"]) - e.clock.ms / 1000)).toBeLessThan(300);
    expect(handled).toEqual([JSON.parse(delivery!.body)]);
    expect(handled[0]).toMatchObject({
      type: "bulkcheck.command.ended",
      version: 1,
      data: { command: "download", exit_code: 0, status: "ok", tasks: [id], output: join(e.dir, "out.csv"), charged_micros: 500 * PRICE },
    });
    // The URL's path may be a secret (a chat's webhook): only its origin is shown.
    expect(out.stderr).toContain(`Notified ${new URL(receiver.url).origin}/… (200; webhook-id ${delivery!.headers["webhook-id"]}).`);
    expect(out.stderr).not.toContain("/hooks/bulkcheck");

    // Someone who captured the request sends it again: it verifies (within the tolerance), and its id gives it away.
    const captured = Object.fromEntries(
      Object.entries(delivery!.headers).filter(([name]) => name.startsWith("webhook-") || name === "content-type"),
    );
    const again = await fetch(receiver.url, { method: "POST", headers: captured, body: delivery!.body });
    expect(again.status).toBe(200);
    expect(replays).toEqual([delivery!.headers["webhook-id"]]);
    expect(handled).toHaveLength(1);

    // Tampered with, or signed with another secret, it does not verify.
    expect(() => recipe.verifyWebhook(WEBHOOK_SECRET, delivery!.headers, delivery!.body.replace('"ok"', '"no"'), e.clock.ms)).toThrow(
      "bad signature",
    );
    expect(() => recipe.verifyWebhook(WEBHOOK_SECRET, delivery!.headers, delivery!.body, e.clock.ms + 600_000)).toThrow("timestamp");

    if (PYTHON) {
      expect(pythonVerify(delivery!, e.clock.ms / 1000)).toEqual({ summary: JSON.parse(delivery!.body) });
      expect(pythonVerify({ ...delivery!, body: delivery!.body.replace('"ok"', '"no"') }, e.clock.ms / 1000).error).toContain(
        "bad signature",
      );
    }
  });

  it("tries again after 500, 500 with the same webhook-id, each attempt signed, and is delivered on the third", async () => {
    const e = await sandbox();
    await withSecret(e);
    const recipe = await nodeRecipe();
    const receiver = await startReceiver((_delivery, n) => (n <= 2 ? 500 : 200));
    receivers.push(receiver);
    const id = await submitted(e);
    const out = await e.run(["wait", id, "--interval", "0.2", "--notify", receiver.url]);
    expect(out.code, out.stderr).toBe(0);
    expect(receiver.deliveries).toHaveLength(3);
    const ids = new Set(receiver.deliveries.map((delivery) => delivery.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    for (const delivery of receiver.deliveries)
      expect(recipe.verifyWebhook(WEBHOOK_SECRET, delivery.headers, delivery.body, e.clock.ms)).toBeDefined();
    expect(out.stderr).toContain("(200 after 3 attempts;");
  });

  it("ends within --timeout, telling included: a receiver that never answers gets its one attempt, a hanging --on-done is stopped, exit 8", async () => {
    const e = await sandbox({ numbersPerSecond: 1, fakeClock: false });
    await withSecret(e);
    const receiver = await startReceiver(() => null);
    receivers.push(receiver);
    const id = await submitted(e);
    const started = Date.now();
    const out = await e.bin(["wait", id, "--interval", "0.2", "--timeout", "4", "--notify", receiver.url, "--on-done", "sleep 100"]);
    const tookMs = Date.now() - started;
    expect(out.code, out.stderr).toBe(8);
    expect(receiver.deliveries).toHaveLength(1);
    expect(JSON.parse(receiver.deliveries[0]!.body)).toMatchObject({ data: { exit_code: 8, status: "pending" } });
    expect(out.stderr).toContain("The --timeout of 4 s ran out (its last 400 ms kept to tell how the command ended)");
    expect(out.stderr).toMatch(/the notification to http:\/\/127\.0\.0\.1:\d+\/… was not delivered: no answer within \d+ ms/);
    expect(out.stderr).toMatch(
      /warning: the --on-done command sleep was still running after \d+ ms and was stopped; the exit code stays 8\./,
    );
    // Generous: before, the delivery alone took 5 s more than --timeout, and the command 60 s more.
    expect(tookMs).toBeLessThan(2 * 4_000);
  });

  it("sends a refusal (400) once, as a warning, and the exit code and --json's last line of stderr stay", async () => {
    const e = await sandbox({ failRate: 1 });
    await withSecret(e);
    const receiver = await startReceiver(() => 400);
    receivers.push(receiver);
    const id = await submitted(e);
    const out = await e.run(["wait", id, "--interval", "0.2", "--notify", receiver.url, "--json"]);
    expect(out.code, out.stderr).toBe(6);
    expect(receiver.deliveries).toHaveLength(1);
    expect(JSON.parse(receiver.deliveries[0]!.body)).toMatchObject({ data: { exit_code: 6, status: "task_failed" } });
    const stderr = lines(out.stderr);
    expect(stderr.at(-2)).toContain(`warning: ${new URL(receiver.url).origin}/… refused the notification with 400; it is not sent again`);
    expect(JSON.parse(stderr.at(-1)!)).toMatchObject({ error: { code: "task_failed", exit_code: 6 } });
  });

  it("needs a secret before doing anything, says how to make one, and --notify-format slack posts unsigned text", async () => {
    const e = await sandbox();
    const receiver = await startReceiver();
    receivers.push(receiver);
    const list = e.file("list.txt", listText(500));
    const refused = await e.run(submitArgs(list, ...WAITING, "--notify", receiver.url));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("no webhook secret is set");
    expect(refused.stderr).toContain("bulkcheck config set webhook-secret --generate");
    expect(e.state().tasks).toHaveLength(0);
    expect((await e.run(["config", "set", "notify", receiver.url])).code).toBe(0);
    expect((await e.run(["config", "set", "notify-format", "slack"])).code).toBe(0);
    const out = await e.run(submitArgs(list, ...WAITING));
    expect(out.code, out.stderr).toBe(0);
    const [delivery] = receiver.deliveries;
    expect(delivery!.headers["webhook-signature"]).toBeUndefined();
    expect(JSON.parse(delivery!.body)).toEqual({
      text: expect.stringMatching(/^bulkcheck submit succeeded on .+: run \S+; 1 task\(s\); .*charged \$/),
    });
  });

  it("escapes the service's text for Slack's markup: no <!channel>, no disguised link, no @channel (issue 35, point 5)", async () => {
    const hostile = "Key revoked <!channel> & see <https://evil.example/steal|the status page> @here";
    const server = await startServer((req, res) => sendEnvelope(req, res, { code: 40100, msg: hostile }, 401));
    const receiver = await startReceiver();
    receivers.push(receiver, { url: server.origin, deliveries: [], close: () => server.close() });
    const e = await sandbox();
    const out = await e.run(["download", FULL_TASK.id, "--notify", receiver.url, "--notify-format", "slack"], {
      env: { BULKCHECK_BASE_URL: server.origin },
    });
    expect(out.code, out.stderr).toBe(4);
    const { text } = JSON.parse(receiver.deliveries[0]!.body) as { text: string };
    expect(text).toContain("Key revoked &lt;!channel&gt; &amp; see &lt;https://evil.example/steal|the status page&gt; @\u2060here");
    expect(text).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
  });

  it("never shows the secret: set from stdin, refused on the command line, redacted by config get and list, absent from a --verbose run", async () => {
    const e = await sandbox();
    const refused = await e.run(["config", "set", "webhook-secret", WEBHOOK_SECRET]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("Refusing to take the webhook secret from the command line");
    await withSecret(e);
    const get = await e.run(["config", "get", "webhook-secret"]);
    expect(get.stdout).toBe("whse…9b7d\n");
    const list = await e.run(["config", "list", "--json"], { env: { BULKCHECK_WEBHOOK_SECRET: WEBHOOK_SECRET } });
    expect(JSON.parse(list.stdout).settings["webhook-secret"]).toEqual({
      value: "whse…9b7d",
      source: "environment",
      variable: "BULKCHECK_WEBHOOK_SECRET",
      profile_value: "whse…9b7d",
      default: null,
    });
    const receiver = await startReceiver();
    receivers.push(receiver);
    const id = await submitted(e);
    const out = await e.run(["wait", id, "--interval", "0.2", "--notify", receiver.url, "--verbose", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    expect(receiver.deliveries).toHaveLength(1);
    // e.run's assertClean has checked every output above for the secret, and e.close checks the state files.
  });

  it("config set webhook-secret reads it from a hidden prompt in a terminal, which never shows it", async () => {
    const e = await sandbox({ fakeClock: false });
    const out = await runInTerminal(["config", "set", "webhook-secret"], {
      env: e.env,
      cwd: e.dir,
      keys: [{ after: "Webhook secret (input hidden):", send: `${WEBHOOK_SECRET}\r` }],
    });
    expect(out.code, out.screen).toBe(0);
    expect(out.screen).not.toContain(WEBHOOK_SECRET.slice(6, 20));
    expect((await e.run(["config", "get", "webhook-secret"])).stdout).toBe("whse…9b7d\n");
  });

  it("config set webhook-secret --generate stores a new secret and prints it once", async () => {
    const e = await sandbox();
    const made = await e.run(["config", "set", "webhook-secret", "--generate"]);
    expect(made.code, made.stderr).toBe(0);
    const secret = made.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(made.stderr).not.toContain(secret);
    expect(made.stderr).toContain("it is never shown again");
    const get = await e.run(["config", "get", "webhook-secret"]);
    expect(get.stdout).toBe(`whse…${secret.slice(-4)}\n`);
    const notGenerated = await e.run(["config", "set", "base-url", "--generate"]);
    expect(notGenerated.code).toBe(2);
  });
});

describe("the sandbox's webhook receiver", () => {
  it("records a submit --wait --notify to it, verified with the secret sandbox --profile made, and lists it at GET /webhooks", async () => {
    const configDir = tempDir();
    const dir = tempDir();
    const log = join(dir, "sandbox.log");
    const env = { BULKCHECK_CONFIG_DIR: configDir };
    const serving = spawnCli(["sandbox", "--port", "0", "--profile", "try", "--json", "--log", log], { env });
    try {
      await until(() => serving.output().stdout.includes("\n"), 30_000);
      const started = JSON.parse(serving.output().stdout) as { base_url: string; webhook_url: string };
      expect(started.webhook_url).toBe(`${started.base_url}/webhooks`);
      const list = join(dir, "list.txt");
      writeFileSync(list, listText(300));
      const out = await runBin(
        [
          "--profile",
          "try",
          ...submitAs(list, "carrier_batch", "GB", ...WAITING, "-o", join(dir, "out.csv"), "--notify", started.webhook_url),
        ],
        { env },
      );
      expect(out.code, out.stderr).toBe(0);
      const listed = (await (await fetch(started.webhook_url)).json()) as { deliveries: Array<Record<string, string>> };
      expect(listed.deliveries).toEqual([
        expect.objectContaining({ path: "/webhooks", id: expect.stringMatching(/^msg_[0-9a-f]{32}$/), verified: true }),
      ]);
      const delivery = listed.deliveries[0]!;
      expect(out.stderr).toContain(`Notified ${started.base_url}/… (200; webhook-id ${delivery.id}).`);
      // The documented recipe verifies it too, with the profile's secret (read from the config file: it is never shown).
      const secret = (
        JSON.parse(readFileSync(join(configDir, "config.json"), "utf8")) as { profiles: Record<string, Record<string, string>> }
      ).profiles.try!["webhook-secret"]!;
      const headers = { "webhook-id": delivery.id!, "webhook-timestamp": delivery.timestamp!, "webhook-signature": delivery.signature! };
      expect((await nodeRecipe()).verifyWebhook(secret, headers, delivery.body!)).toMatchObject({
        type: "bulkcheck.command.ended",
        data: { command: "submit", exit_code: 0, status: "ok", profile: "try", output: join(dir, "out.csv") },
      });
      // One signed with another secret is recorded as not verified.
      await fetch(started.webhook_url, {
        method: "POST",
        headers: {
          ...headers,
          "webhook-signature": delivery.signature!.replace(/^v1,./, (start) => (start.endsWith("A") ? "v1,B" : "v1,A")),
        },
        body: delivery.body,
      });
      expect(((await (await fetch(started.webhook_url)).json()) as { deliveries: unknown[] }).deliveries[1]).toMatchObject({
        id: delivery.id,
        verified: false,
      });
      // Its log has a line per delivery; nothing anywhere shows the secret.
      expect(readFileSync(log, "utf8")).toMatch(new RegExp(`^POST /webhooks http=200 \\d+ms webhook ${delivery.id} verified$`, "m"));
      for (const text of [out.stdout, out.stderr, serving.output().stdout, serving.output().stderr, readFileSync(log, "utf8")]) {
        expect(text).not.toContain(secret);
      }
    } finally {
      serving.child.kill("SIGTERM");
      await serving.done;
    }
  });
});
