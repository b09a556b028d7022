import { spawn } from "node:child_process";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli, tempDir } from "../helpers/cli.js";
import { API_KEY, lines, listText, submitAs, until, WAITING } from "../helpers/sandbox.js";

/** Issue 30, point 7: the first five minutes of a new user, as the README tells them. */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// Real processes on the real clock, on a machine busy with other work.
vi.setConfig({ testTimeout: 120_000 });

/** The commands of the README's "Try it on the sandbox" section, line by line, as written. */
function readmeSandboxLines(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Try it on the sandbox"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return block.split("\n").filter((line) => line.trim() !== "");
}

/** A port nothing listens on now (the README's 8787 may be taken on a shared machine). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** A shell session: lines typed one at a time, each run to its end before the next, as a person at a prompt would. */
interface Shell {
  /** Types `line` and resolves with its exit status once it has run (for `cmd &`, once it is started). */
  type(line: string): Promise<number>;
  output(): { stdout: string; stderr: string };
  close(): void;
}

const shells: Shell[] = [];
afterEach(() => {
  for (const shell of shells.splice(0)) shell.close();
});

/**
 * A fresh bash in `cwd` with nothing of this test's environment but PATH (where `node` is)
 * and a new HOME. It reads what is typed from a pipe, so aliases are switched on as an
 * interactive shell has them; its own process group, so closing it stops what it started.
 */
function freshShell(cwd: string, home: string): Shell {
  const child = spawn("bash", ["--norc", "--noprofile"], {
    cwd,
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}`, HOME: home, TERM: "dumb" },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  child.stdin.write("shopt -s expand_aliases\n");
  let typed = 0;
  const shell: Shell = {
    async type(line) {
      const marker = `@@done-${++typed}:`;
      child.stdin.write(`${line}\necho "${marker}$?"\n`);
      await until(() => stdout.includes(marker), 100_000);
      return Number(new RegExp(`${marker}(\\d+)`).exec(stdout)![1]);
    },
    output: () => ({ stdout, stderr }),
    close() {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
  shells.push(shell);
  return shell;
}

describe("the README's sandbox section", () => {
  it("works line by line in a fresh shell in a clone after npm ci && npm run demo, a 300-line list included", async () => {
    // A clone as the user has it: bin/ and examples/ (the build is the one this suite runs against).
    const clone = tempDir("bulkcheck-clone-");
    for (const name of ["bin", "examples"]) symlinkSync(join(ROOT, name), join(clone, name));
    const home = tempDir("bulkcheck-home-");
    const port = String(await freePort());
    const shell = freshShell(clone, home);
    const statuses: Array<[string, number]> = [];
    for (const line of readmeSandboxLines()) {
      const status = await shell.type(line.replaceAll("8787", port));
      statuses.push([line, status]);
      // As a person reads what the sandbox says before typing on.
      if (/&\s*(#.*)?$/.test(line)) await until(() => shell.output().stderr.includes("listening on"), 30_000);
    }
    const { stdout, stderr } = shell.output();
    expect(
      statuses.filter(([, status]) => status !== 0),
      stderr,
    ).toEqual([]);
    expect(stderr).toContain(`Profile "sandbox" now points at this sandbox: base-url http://127.0.0.1:${port}`);
    expect(stdout).toContain("$10.00 (10000000 micros)");
    // The list went through as it is (fewer numbers than the service's minimum task of 500), and its results were written.
    expect(stderr).not.toContain("at least 500");
    expect(stderr).toMatch(/Wrote \d+ rows to .*sample-checked\.csv/);
    expect(lines(readFileSync(join(clone, "sample-checked.csv"), "utf8")).length).toBeGreaterThan(200);
    // The chain: activity bought for the mobiles only, both products' columns beside each row.
    expect(stderr).toMatch(
      /Then number_activity_batch where carrier_batch says number_type=mobile: \d+ of \d+ numbers; the condition spares/,
    );
    const [chainHeader] = lines(readFileSync(join(clone, "sample-chain.csv"), "utf8"));
    expect(chainHeader).toContain(",number_type,");
    expect(chainHeader).toContain(",activity_activated,activity_status,activity_checked_at");
    expect(stdout).toMatch(/\tfinished\t.*sample\.csv\tcarrier_batch\t/);
    expect(stdout).toContain(`base-url\thttp://127.0.0.1:${port}\tprofile sandbox`);
    expect(stdout).toContain("min-task-size\t1\tprofile sandbox\t500");
    // The README's last line stopped the sandbox: its port is free again.
    for (let tries = 0; (await listening(Number(port))) && tries < 100; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await listening(Number(port))).toBe(false);
  });
});

describe("sandbox --profile", () => {
  it("points the profile at itself before it says it listens: URL, key, its limits and prices; a small list then just works", async () => {
    const dir = tempDir();
    const configDir = tempDir();
    const stop = new AbortController();
    const serving = runCli(["sandbox", "--port", "0", "--profile", "try", "--max-task-size", "200", "--prices", "carrier_batch=1500"], {
      env: { BULKCHECK_CONFIG_DIR: configDir, BULKCHECK_BASE_URL: "http://127.0.0.1:9", BULKCHECK_API_KEY: undefined },
      signal: stop.signal,
    });
    const config = join(configDir, "config.json");
    await until(() => existsSync(config));
    const profile = (JSON.parse(readFileSync(config, "utf8")) as { profiles: Record<string, Record<string, unknown>> }).profiles.try!;
    expect(profile).toMatchObject({
      "base-url": expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      "api-key": expect.stringMatching(/^sk_sandbox_/),
      "min-task-size": 1,
      "max-task-size": 200,
      "max-in-flight": 5,
      "price.carrier_batch": 1500,
      "price.number_activity_batch": 3000,
      "webhook-secret": expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const list = join(dir, "small.txt");
    writeFileSync(list, listText(300));
    const submit = await runCli(["--profile", "try", ...submitAs(list, "carrier_batch", "GB", ...WAITING, "-o", join(dir, "out.csv"))], {
      env: { BULKCHECK_CONFIG_DIR: configDir },
    });
    expect(submit.code, submit.stderr).toBe(0);
    // Two tasks of at most 200, costed at the sandbox's price.
    expect(submit.stderr).toContain("Plan: 300 numbers in 2 task(s) of carrier_batch for GB; reservation $0.45 at $0.0015 per number");
    stop.abort();
    const out = await serving;
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\nAPI key: sk_sandbox_\w+\nProfile "try" now points at this sandbox/);
    // A webhook secret of its own, never shown, and the receiver --notify can try it with.
    expect(out.stderr).toContain("and a new webhook-secret (never shown; the sandbox's webhook receiver verifies with it)");
    expect(out.stderr).toMatch(
      /\nWebhook receiver: (http:\/\/127\.0\.0\.1:\d+)\/webhooks \(--notify \1\/webhooks; curl -s \1\/webhooks lists what it received\)\n/,
    );
    expect(out.stderr).toContain(
      "warning: BULKCHECK_BASE_URL is set in this shell and overrides the profile: unset BULKCHECK_BASE_URL to use it.",
    );
    expect(out.stderr).not.toContain("Try it: export");
  });

  it("keeps the smallest task asked for with --min-task-size, and names the profile in --json", async () => {
    const configDir = tempDir();
    const stop = new AbortController();
    const serving = runCli(["sandbox", "--port", "0", "--profile", "strict", "--min-task-size", "500", "--api-key", API_KEY, "--json"], {
      env: { BULKCHECK_CONFIG_DIR: configDir },
      signal: stop.signal,
    });
    const config = join(configDir, "config.json");
    await until(() => existsSync(config));
    expect(JSON.parse(readFileSync(config, "utf8")).profiles.strict).toMatchObject({ "min-task-size": 500, "api-key": API_KEY });
    stop.abort();
    const out = await serving;
    expect(JSON.parse(out.stdout)).toMatchObject({ profile: "strict", base_url: expect.stringMatching(/^http:/) });
  });
});
