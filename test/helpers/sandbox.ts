import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { startSandbox, type Sandbox, type SandboxOptions, type SandboxState } from "../../src/sandbox/index.js";
import { SqliteStore } from "../../src/store/sqlite-store.js";
import type { RunRecord, TaskRecord } from "../../src/store/store.js";
import { CACHE_HOME, runBin, runCli, spawnCli, tempDir, type CliResult, type RunOptions, type SpawnOptions } from "./cli.js";

/**
 * The API key of every e2e sandbox. Distinctive, so a leak into any output is
 * caught by `assertClean`: the middle part never appears in a redacted form.
 */
export const API_KEY = "sk_e2e_LEAKCANARY_8d41c07f5a9e23b6";
const KEY_SECRET_PART = "LEAKCANARY";

/**
 * A webhook secret (whsec_ and the base64 of a 30-byte key) whose middle part never appears
 * in a redacted form: `assertClean` fails on any output that holds it, as for the API key.
 */
export const WEBHOOK_SECRET = "whsec_WebhookLeakCanaryf3c9a1e5b2d8c4f6a0e9b7d";
const WEBHOOK_SECRET_PART = "WebhookLeakCanary";

/** SGR (colour/style) escape sequences. Spinners' cursor controls are not colour. */
// eslint-disable-next-line no-control-regex -- escape codes are what it finds
const SGR = /\u001b\[[0-9;]*m/;
/** A V8 stack frame line, e.g. "    at submitCommand (file:///…/submit.js:12:3)". */
const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(native\)|<anonymous>\)?)$/m;

export interface E2eOptions extends Partial<SandboxOptions> {
  /**
   * Drive the sandbox with a clock that only moves when the CLI sleeps (in-process
   * runs), so waiting, polling and Retry-After cost no real time. Default true;
   * spawned binaries need the real clock (false).
   */
  fakeClock?: boolean;
}

export interface E2e {
  sandbox: Sandbox;
  /** The sandbox clock (ms); moved by the CLI's injected sleep when fakeClock is on. */
  clock: { ms: number };
  /** The environment a CLI run needs: base URL, key, and a fresh config dir. */
  env: Record<string, string>;
  configDir: string;
  /** A scratch directory for lists and outputs. */
  dir: string;
  /** Runs bulkcheck in-process (same clock as the sandbox) and checks the output is clean. */
  run(argv: string[], options?: RunOptions): Promise<CliResult>;
  /** Spawns the built binary and checks the output is clean. */
  bin(argv: string[], options?: SpawnOptions): Promise<CliResult>;
  /** Spawns the built binary; the caller awaits `done` (output is checked when it settles). */
  spawn(argv: string[], options?: Pick<SpawnOptions, "env" | "stdin" | "stdinOpen">): ReturnType<typeof spawnCli>;
  state(): SandboxState;
  /** Writes a file into `dir` and returns its path. */
  file(name: string, content: string): string;
  close(): Promise<void>;
}

/** Starts a sandbox on 127.0.0.1:0 with the e2e key, and returns what a test needs to run the CLI against it. */
export async function startE2e(options: E2eOptions = {}): Promise<E2e> {
  const { fakeClock = true, ...sandboxOptions } = options;
  const clock = { ms: Date.UTC(2025, 0, 15, 9, 0, 0) };
  const sandbox = await startSandbox({
    apiKey: API_KEY,
    noResultRate: 0,
    ...(fakeClock ? { now: () => clock.ms } : {}),
    ...sandboxOptions,
  });
  const configDir = tempDir("bulkcheck-e2e-config-");
  const dir = tempDir("bulkcheck-e2e-work-");
  // XDG_CACHE_HOME: a binary run with its HOME in a test's directory keeps no compile cache there either.
  const env = { BULKCHECK_BASE_URL: sandbox.url, BULKCHECK_API_KEY: API_KEY, BULKCHECK_CONFIG_DIR: configDir, XDG_CACHE_HOME: CACHE_HOME };
  const fake = fakeClock
    ? {
        now: () => clock.ms,
        sleep: async (ms: number, signal?: AbortSignal) => {
          signal?.throwIfAborted();
          clock.ms += ms;
          // Let the event loop turn, as a real timer would.
          await new Promise((resolve) => setImmediate(resolve));
        },
      }
    : {};
  return {
    sandbox,
    clock,
    env,
    configDir,
    dir,
    async run(argv, runOptions = {}) {
      const result = await runCli(argv, { cwd: dir, ...fake, ...runOptions, env: { ...env, ...runOptions.env } });
      assertClean(argv, result, { colour: Boolean(runOptions.tty && runOptions.colors), env: { ...env, ...runOptions.env } });
      return result;
    },
    async bin(argv, binOptions = {}) {
      const result = await runBin(argv, { cwd: dir, ...binOptions, env: { ...env, ...binOptions.env } });
      assertClean(argv, result, { colour: false, env: { ...env, ...binOptions.env } });
      return result;
    },
    spawn(argv, spawnOptions = {}) {
      const spawned = spawnCli(argv, { cwd: dir, ...spawnOptions, env: { ...env, ...spawnOptions.env } });
      const done = spawned.done.then((result) => {
        assertClean(argv, result, { colour: false, env: { ...env, ...spawnOptions.env } });
        return result;
      });
      return { ...spawned, done };
    },
    state: () => sandbox.inspect(),
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    async close() {
      await sandbox.close();
      // The store and every other file of the state directory must never hold the key.
      for (const name of readdirSync(configDir, { recursive: true, encoding: "utf8" })) {
        const path = join(configDir, name);
        if (name !== "config.json" && statSync(path).isFile()) {
          expect(readFileSync(path).includes(KEY_SECRET_PART), `the API key appeared in ${name}`).toBe(false);
          expect(readFileSync(path).includes(WEBHOOK_SECRET_PART), `the webhook secret appeared in ${name}`).toBe(false);
        }
      }
      rmSync(configDir, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Registers an afterEach that closes every sandbox the test started; returns the starter. */
export function e2eSandboxes(): (options?: E2eOptions) => Promise<E2e> {
  const open: E2e[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });
  return async (options) => {
    const e = await startE2e(options);
    open.push(e);
    return e;
  };
}

/** The runs in the store of `e`'s state directory, oldest first, each with its tasks in part order (none before the first run). */
export async function storedRuns(e: E2e): Promise<Array<RunRecord & { tasks: TaskRecord[] }>> {
  const path = join(e.configDir, "bulkcheck.db");
  // Opening would create it: a command that stored nothing must leave no store behind.
  if (!existsSync(path)) return [];
  const store = SqliteStore.open(path);
  try {
    const runs = (await store.runs.list({})).reverse();
    return await Promise.all(runs.map(async (run) => ({ ...run, tasks: await store.tasks.ofRun(run.id) })));
  } finally {
    await store.close();
  }
}

/** Every task of the store's runs, oldest run first: each written with its idempotency key before its upload. */
export async function storedTasks(e: E2e): Promise<TaskRecord[]> {
  return (await storedRuns(e)).flatMap((run) => run.tasks);
}

/** A run as `runs --json` lists it (the fields tests read). */
export interface ListedRun {
  id: string;
  service: string;
  profile: string;
  state: string;
  started_at: string;
  source: string;
  product: string;
  host?: string;
  user?: string;
  kept: number;
  reused: number;
  uploaded: number;
  padded: number;
  checked: number;
  charged_micros: number;
  saved_micros: number;
}

/** What some runs add up to, as `runs --json` totals them. */
export type ListedFigures = Pick<ListedRun, "kept" | "reused" | "uploaded" | "padded" | "checked" | "charged_micros" | "saved_micros"> & {
  runs: number;
};

/** What `runs --json` prints: the runs listed and their totals, in all and per service, profile and product. */
export interface ListedRuns {
  runs: ListedRun[];
  totals: ListedFigures & { groups: Array<ListedFigures & Pick<ListedRun, "service" | "profile" | "product">> };
}

/** `bulkcheck runs --json` with `args` (--all, --state …), run in-process against `e` (its exit code checked). */
export async function listedRuns(e: E2e, args: string[] = [], options: RunOptions = {}): Promise<ListedRuns> {
  const out = await e.run(["runs", "--json", ...args], options);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as ListedRuns;
}

/** argv of a submit of `file` as `product` for `country`. */
export function submitAs(file: string, product: string, country: string, ...extra: string[]): string[] {
  return ["submit", file, "--type", product, "--country", country, ...extra];
}

/** The flags of a submit that goes ahead unasked and waits, checking every 0.2 s. */
export const WAITING = ["--yes", "--wait", "--interval", "0.2"] as const;

/**
 * argv of a GB number_validation_batch submit of `file`, with --yes: a test's
 * stdin is no terminal, and without --yes a submit there refuses to reserve
 * (`promptedSubmitArgs` leaves it out, for the prompt itself).
 */
export function submitArgs(file: string, ...extra: string[]): string[] {
  return [...promptedSubmitArgs(file), "--yes", ...extra];
}

/** argv of a GB number_validation_batch submit of `file` that asks before reserving. */
export function promptedSubmitArgs(file: string, ...extra: string[]): string[] {
  return ["submit", file, "--type", "number_validation_batch", "--country", "GB", ...extra];
}

/**
 * A sentence, or the end of one, said again at once as the next: "requests in flight were
 * stopped. Stopped.", "nothing was written.\nNothing was written." (case aside).
 */
const DOUBLED_SENTENCE = /\b(\w[\w ]{3,}?)\.\s+\1\./i;

/**
 * What must hold for every run of the suite: the API key and the webhook secret never
 * appear, no stack trace without --verbose, no sentence said twice in a row (issue 35,
 * point 9), and no colour unless a colour terminal was asked for.
 */
export function assertClean(
  argv: readonly string[],
  result: CliResult,
  context: { colour: boolean; env: Record<string, string | undefined> },
): void {
  const output = result.stdout + result.stderr;
  expect(output.includes(API_KEY), "the API key appeared in the output").toBe(false);
  expect(output.includes(KEY_SECRET_PART), "part of the API key appeared in the output").toBe(false);
  expect(output.includes(WEBHOOK_SECRET_PART), "part of the webhook secret appeared in the output").toBe(false);
  if (!argv.includes("--verbose")) expect(result.stderr, "a stack trace without --verbose").not.toMatch(STACK_FRAME);
  expect(result.stderr, "a sentence said twice in a row").not.toMatch(DOUBLED_SENTENCE);
  const colourOff = !context.colour || argv.includes("--no-color") || Boolean(context.env.NO_COLOR);
  if (colourOff) expect(output, "colour escapes with colour off").not.toMatch(SGR);
}

/** `count` distinct valid GB mobile numbers as people write them: "+44 7400 100000", then 7500, then 7800. */
export function gbList(count: number, offset = 0): string[] {
  const prefixes = ["7400", "7500", "7800"];
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    return `+44 ${prefixes[n % prefixes.length]} ${String(100_000 + (n % 900_000))}`;
  });
}

/** The spec's identifier of a number from `gbList`: digits with the country code. */
export function identifier(number: string): string {
  return number.replace(/\D/g, "");
}

/** A .txt list of `count` numbers (one per line). */
export function listText(count: number, offset = 0): string {
  return gbList(count, offset).join("\n") + "\n";
}

/** A CSV (`name,phone`) of `count` valid GB numbers, each followed by a row that is not a number: as many rejects as numbers. */
export function crmText(count: number): string {
  const rows = gbList(count).flatMap((number, i) => [`Contact ${i},${number}`, `Nobody ${i},not a number`]);
  return ["name,phone", ...rows].join("\n") + "\n";
}

/**
 * The task ids a submit with -o announced on stderr ("Task … submitted.", or for a run carried on
 * "Task …: submitted earlier by this run, carried on."): with -o, stdout is for the results.
 */
export function submittedIds(stderr: string): string[] {
  return [...stderr.matchAll(/^Task ([0-9a-f]{32})(?: submitted\.|: submitted earlier by this run, carried on\.)$/gm)].map(
    (match) => match[1]!,
  );
}

/** Non-empty stdout lines. */
export function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

/** Resolves once `condition` holds, checking every 20 ms; fails after `limitMs`. */
export async function until(condition: () => boolean, limitMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > limitMs) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const TASK_ID = /^[0-9a-f]{32}$/;
