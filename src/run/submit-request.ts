import type { ApiClient } from "../api/types.js";
import type { Limits } from "../config/resolve.js";
import type { PrepareOptions, PrepareResult } from "../prepare/index.js";
import type { IdentifierSet } from "../spec/identifier-set.js";
import type { ServiceType } from "../spec/products.js";
import type { Lease, RunRecord, RunSource, Scope, Store } from "../store/store.js";
import type { ScheduleEvent } from "../tasks/schedule.js";
import type { UploadResult } from "../tasks/submit.js";
import type { RunCommand } from "./identity.js";
import type { RunLease } from "./lease.js";
import type { InFlightTask, RunPlan } from "./plan.js";
import type { ResultRecording } from "../ledger/recording.js";
import type { PadPolicy } from "../ledger/reuse.js";

/** What one `submit` asks for. */
export interface SubmitRequest {
  /** What makes this command the same command as an earlier one (see runIdentity). */
  command: RunCommand;
  product: ServiceType;
  /** The task country; undefined under --country auto (each part has its own) and for carrier_batch without --country. */
  country: string | undefined;
  /** Preparation as the flags ask: the source, country, column, and the rest. */
  prepare: Omit<PrepareOptions, "outputDir" | "uploadPath" | "maxTaskSize" | "countryTasks">;
  /** The list made otherwise than by preparing a source (retry-failed's numbers without a result), instead of `prepare`. */
  lists?: (workDir: string) => Promise<{ value: PrepareResult; source: RunSource }>;
  /** --idempotency-key: the parts' keys, numbered when split, instead of keys derived from the run. */
  userKey?: string;
  dryRun: boolean;
  maxCostMicros?: number;
  /** Answers younger than this are reused (0: only those given since this command began); ignored without the ledger. */
  maxAgeMs: number;
  ledger: boolean;
  /** When the numbers that need a result are too few for a task: fill it with the oldest fresh results, or let them wait. */
  pad: PadPolicy;
  /** Upload the numbers checked without a result within maxAgeMs too (--retry-no-result). */
  retryNoResult: boolean;
  /**
   * Whether numbers in flight and numbers answered without a result count as checked (a
   * submit), or only results do (retry-failed: its numbers are those a task answered without
   * a result, and only a fresh result elsewhere spares one).
   */
  countUnanswered: boolean;
  /** Wait until every task has finished, or only until every part is uploaded. */
  wait: boolean;
  pollIntervalMs: number;
  timeoutMs?: number;
  timeoutSeconds?: number;
  /** The command that carries on, for the hints of errors that stop the run. */
  resumeCommand: string;
  /**
   * A list with no number to check is a run that checks nothing, not an input error (a chain's
   * later product whose condition selected none, or whose numbers its runs part by part took).
   */
  mayBeEmpty?: boolean;
  /**
   * When the command began (default: when this run began): answers given since are fresh
   * whatever --max-age says, and --timeout counts from it. A chain's later runs take the
   * chain's start: its --timeout covers the whole chain.
   */
  startedAt?: number;
  /**
   * A failed task does not fail the run: its outcome lists it among the others (a chain's first
   * product, whose other numbers go on to the later products). The caller ends the run.
   */
  keepFailedTasks?: boolean;
  /** When another process holds this command's run: wait until it lets go (default), or stop with RunBusyError (exit 10). */
  ifBusy?: "wait" | "exit";
}

/** What a run tells its caller as it goes, in order. */
export type RunEvent =
  | { type: "continuing"; run: RunRecord; tasks: number }
  /** The run's list changed: it is abandoned (with --dry-run: it would be). */
  | { type: "abandoned"; run: RunRecord; reason: string }
  | { type: "plan"; plan: RunPlan; continued: boolean }
  /** Too few numbers for a task while others of the list are in flight (the plan says which): the run waits for those tasks, then plans again. */
  | { type: "waiting for in flight"; plan: RunPlan }
  /** Another run claimed numbers of the product between this run's plan and its claim: it plans again. */
  | { type: "claimed meanwhile" }
  | { type: "task"; result: UploadResult; runId: string }
  | { type: "schedule"; event: ScheduleEvent }
  /** Another process holds this command's run: this one waits until it lets go (announced once). */
  | { type: "busy"; runId: string; holder: Lease };

export interface SubmitRunDeps {
  store: Store;
  scope: Scope;
  client: () => Promise<ApiClient>;
  limits: Limits;
  priceMicros: number;
  /** A private directory for the prepared list and the parts' files, removed by the caller. */
  workDir: string;
  lease: Lease;
  now: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  signal: AbortSignal;
  /**
   * Asked before money is reserved, with the share of it that pads a task to the minimum size;
   * without it (--yes) the reservation goes ahead. True goes ahead.
   */
  confirm?: (reservationMicros: number, balanceMicros: number, paddingMicros: number, laterMicros: number) => Promise<boolean>;
  /**
   * What the caller will spend after this run, at most (a chain's later products, planned on every
   * number once this run's plan is made): counted in --max-cost and named in the question, so
   * neither is agreed to for less than the whole. Asked once, before anything is reserved.
   */
  laterMicros?: () => Promise<number>;
  /** Whether other tasks of the command hold the service's room meanwhile (see ScheduleOptions.roomWillCome). */
  roomWillCome?: () => boolean;
  /**
   * Called when another process's run of this command has let go, before this one plans
   * again (and before any request): e.g. to find that it wrote this command's output meanwhile.
   */
  onBusyEnded?: () => Promise<void>;
  /** Told what preparation found, before anything is planned; the run waits for it. */
  onPrepared?: (result: PrepareResult) => Promise<void>;
  onEvent: (event: RunEvent) => void;
  /** Where the results of tasks in flight that the run follows go into the ledger (off this thread). */
  recording: ResultRecording;
  /** Called once for each task seen succeeded while the run waits, e.g. to fetch and record its result. */
  onSucceeded?: (result: UploadResult, run: RunRecord) => Promise<void>;
}

/** Where a run stands once its parts are uploaded (and, when waiting, finished). */
export interface RunOutcome {
  run: RunRecord;
  plan: RunPlan;
  /** Each part's task in its latest state, in list order. */
  results: UploadResult[];
  /** The numbers the ledger serves, each with the store reference of the task whose result it takes. */
  reused: IdentifierSet;
  /** The ledger's tasks those results come from (tasks in flight among them, once they have finished), each with when it was checked. */
  reusedTasks: ReadonlyMap<number, string>;
  /** Tasks of other runs, in flight when this one was planned, whose results it takes. */
  inFlight: readonly InFlightTask[];
  /** The numbers that wait for a later run (plan.waiting of them). */
  waiting: IdentifierSet;
  prepared: PrepareResult;
  lease: RunLease;
}
