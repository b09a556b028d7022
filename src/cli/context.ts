import { abortableSleep } from "../api/sleep.js";
import type { ApiClient } from "../api/types.js";
import type { ConfigStore } from "../config/store.js";
import type { Scope, Store } from "../store/store.js";
import type { LedgerSettings, Limits } from "../config/resolve.js";
import type { ServiceType } from "../spec/products.js";
import type { CommandUnknownOpts } from "./commander.js";
import { colourEnabled, processIO, type Env, type IO } from "./io.js";
import type { CommandDeadline } from "./deadline.js";
import type { CommandOutcome } from "./outcome.js";
import { Printer } from "./printer.js";
import { SignalStop } from "./signal-stop.js";

/** What the process gives a run: streams, environment, clock and Ctrl-C. Tests build their own. */
export interface Runtime {
  io: IO;
  env: Env;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  /** Aborted on Ctrl-C (SIGINT) or SIGTERM, with a SignalStop as the reason. */
  signal: AbortSignal;
  cwd: string;
}

export interface GlobalOptions {
  json?: boolean;
  /** --query: a JMESPath expression every JSON value printed goes through. */
  query?: string;
  quiet?: boolean;
  color?: boolean;
  verbose?: boolean;
  baseUrl?: string;
  profile?: string;
  /** --timeout of the commands that talk to the service: bounds the whole run (seconds). */
  timeout?: number;
  /** --request-timeout: the headers and body deadlines of each request (seconds). */
  requestTimeout?: number;
}

/** Everything a command's run function needs; built once per invocation. */
export interface Context extends Runtime {
  /** Aborted on Ctrl-C, SIGTERM, or when --timeout runs out (see `deadline`). */
  signal: AbortSignal;
  /** The --timeout bound of the whole run. */
  deadline: CommandDeadline;
  printer: Printer;
  globals: GlobalOptions;
  /** The arguments bulkcheck was run with (after the program name), for hints that say "run the same command again". */
  argv: readonly string[];
  profileName: string;
  /** What the command tells about how it ended (its run, tasks, output, changes, charge): filled in by its action. */
  outcome: CommandOutcome;
  config(): Promise<ConfigStore>;
  /**
   * The store of runs, tasks and the ledger (the embedded SQLite file in the state
   * directory), opened on first use; the journal of 0.1 is imported into it once.
   */
  store(): Promise<Store>;
  /**
   * Where the store is, without opening it: a team's PostgreSQL URL (as configured, password
   * included: never to be shown), else the path of the embedded SQLite file.
   */
  storeLocation(): Promise<string>;
  /** The service (base URL as the client addresses it) and profile that runs, tasks and results belong to. */
  scope(): Promise<Scope>;
  /** Resolves the API key and base URL (flag > environment > profile) and builds a client. */
  client(): Promise<ApiClient>;
  baseUrl(): Promise<string>;
  limits(): Promise<Limits>;
  prices(): Promise<Record<ServiceType, number>>;
  /** The profile's ledger settings: kept or not, the default --max-age, the retention. */
  ledgerSettings(): Promise<LedgerSettings>;
  /**
   * What a failure of this run means to the user: once --timeout ran out, its abort
   * becomes exit 8 with `resume` (see CommandDeadline.explain); a key the service
   * refused gets the hint that fits where the key came from.
   */
  explain(error: unknown, resume: string): unknown;
  /** Closes what the run opened (the HTTP client's sockets). */
  dispose(): Promise<void>;
}

/**
 * How a command's action runs: `main` builds the Context from the parsed global
 * flags, then calls `run` with it. A command module never builds its own.
 */
export type Invoke = (cmd: CommandUnknownOpts, run: (ctx: Context) => Promise<void>) => Promise<void>;

/**
 * The process's streams, environment, clock and signals. `release` hands SIGINT and SIGTERM
 * back to Node once the command has returned: a listener left registered would swallow
 * them, so a process kept alive by something left running could not even be stopped.
 */
export function processRuntime(): Runtime & { release(): void } {
  const controller = new AbortController();
  // Stay registered (not `once`): conf's when-exit hooks the same signals once and
  // re-raises them after its own cleanup, and with no listener left that second
  // signal killed the process before the command could stop and print how to
  // resume. Aborting is idempotent, and it cancels every wait and request, so
  // stopping is prompt.
  // The reason says which signal: SIGTERM ends with 143, Ctrl-C with 130 (see cli/failure.ts).
  const onSignal = (name: NodeJS.Signals) => controller.abort(new SignalStop(name === "SIGTERM" ? "SIGTERM" : "SIGINT"));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    io: processIO(),
    env: process.env,
    now: Date.now,
    sleep: abortableSleep,
    random: Math.random,
    signal: controller.signal,
    cwd: process.cwd(),
    release() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

export function createPrinter(runtime: Runtime, globals: GlobalOptions): Printer {
  return new Printer(runtime.io, {
    json: Boolean(globals.json),
    quiet: Boolean(globals.quiet),
    verbose: Boolean(globals.verbose),
    colour: colourEnabled(runtime.io.stderr, runtime.env, globals.color === false),
  });
}
