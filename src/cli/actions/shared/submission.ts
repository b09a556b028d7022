import { UsageError } from "../../../errors.js";
import { ownLease } from "../../../run/lease.js";
import type { SubmitRequest, SubmitRunDeps } from "../../../run/submit-request.js";
import type { ServiceType } from "../../../spec/products.js";
import { formatUsd, usdToMicros } from "../../../tasks/cost.js";
import { commandLine } from "../../command-line.js";
import type { Context } from "../../context.js";
import { canPrompt, confirm, NOTHING_UPLOADED } from "../../prompt.js";
import type { RunPrinterFlags, runPrinter } from "../../views/run-printer.js";
import { resultRecording } from "./download-deps.js";

export interface SubmitFlags extends RunPrinterFlags {
  idempotencyKey?: string;
  /** No longer needed (every run after a finished one checks again); accepted, with a note. */
  resubmit?: boolean;
  yes?: boolean;
  maxCost?: number;
  /** --max-age: reuse ledger results younger than this many seconds. */
  maxAge?: number;
  /** --no-ledger sets this false: keep no result of this run. */
  ledger?: boolean;
  /** --retry-no-result: upload the numbers checked without a result within --max-age too. */
  retryNoResult?: boolean;
  /** --pad: numbers too few for a task fill it with the oldest fresh results, or wait. */
  pad?: "oldest" | "never";
  /** --if-busy: wait for another process carrying on this run (default), or exit 10. */
  ifBusy?: "wait" | "exit";
}

/**
 * Money is reserved only with a yes: from --yes, or from a person at a terminal.
 * Where nobody can answer (stdin or stderr not a terminal: cron, a pipe, CI) the
 * run stops before uploading rather than spend silently.
 */
export async function confirmReservation(
  ctx: Context,
  micros: number,
  balance: number,
  paddingMicros: number,
  laterMicros = 0,
): Promise<boolean> {
  const padding = paddingMicros > 0 ? ` (${formatUsd(paddingMicros)} of it padding to the minimum task size)` : "";
  const later = laterMicros > 0 ? `, then up to ${formatUsd(laterMicros)} for the later products once their numbers are known,` : "";
  const question = `Reserve ${formatUsd(micros)}${padding}${later} of ${formatUsd(balance)}?`;
  if (canPrompt(ctx.io)) return confirm(ctx.printer, question, { signal: ctx.signal, cancelled: { message: NOTHING_UPLOADED } });
  throw new UsageError(
    "No one can confirm the reservation here (stdin or stderr is not a terminal): add --yes to submit without a prompt.",
    {
      hint: `Nothing was uploaded. The reservation would be ${formatUsd(micros)}${padding} (balance ${formatUsd(balance)}).`,
    },
  );
}

/** What a run's request holds apart from its list: the same flags mean the same for submit and retry-failed. */
export type RunFlagsRequest = Omit<
  SubmitRequest,
  "command" | "product" | "country" | "prepare" | "lists" | "userKey" | "retryNoResult" | "countUnanswered"
>;

/**
 * The run's request from the flags submit and retry-failed share (--dry-run, --max-cost,
 * --max-age, --no-ledger, --pad, --wait, --interval as `pollIntervalMs`, --timeout,
 * --if-busy) and the profile's ledger settings: one mapping for both commands.
 */
export async function runFlagsRequest(
  ctx: Context,
  flags: SubmitFlags & { wait?: boolean | undefined },
  pollIntervalMs: number,
): Promise<RunFlagsRequest> {
  const ledger = await ctx.ledgerSettings();
  const timeoutMs = ctx.deadline.remainingMs();
  return {
    dryRun: Boolean(flags.dryRun),
    ...(flags.maxCost === undefined ? {} : { maxCostMicros: usdToMicros(flags.maxCost) }),
    maxAgeMs: (flags.maxAge ?? ledger.maxAgeSeconds) * 1000,
    ledger: ledger.on && flags.ledger !== false,
    pad: flags.pad ?? ledger.pad,
    wait: Boolean(flags.wait),
    pollIntervalMs,
    ...(timeoutMs === undefined ? {} : { timeoutMs, timeoutSeconds: ctx.deadline.seconds }),
    // The command that carries the run on: the same one, without what no longer does anything (--resubmit).
    resumeCommand: commandLine(ctx.argv.filter((arg) => arg !== "--resubmit")),
    ifBusy: flags.ifBusy ?? "wait",
  };
}

/**
 * What a run needs from the command around it (submit, retry-failed): the store and
 * service, the limits and price, a private directory, this process's lease, the clock,
 * the printer's events, and the question before money is reserved (unless --yes).
 */
export async function runDeps(
  ctx: Context,
  run: {
    product: ServiceType;
    workDir: string;
    yes?: boolean | undefined;
    printer: Pick<ReturnType<typeof runPrinter>, "onEvent" | "onPrepared">;
  },
): Promise<SubmitRunDeps> {
  return {
    store: await ctx.store(),
    scope: await ctx.scope(),
    client: () => ctx.client(),
    limits: await ctx.limits(),
    priceMicros: (await ctx.prices())[run.product],
    workDir: run.workDir,
    lease: ownLease(),
    recording: resultRecording(ctx, await ctx.storeLocation()),
    now: ctx.now,
    sleep: ctx.sleep,
    random: ctx.random,
    signal: ctx.signal,
    ...(run.yes
      ? {}
      : {
          confirm: (micros: number, balance: number, padding: number, later: number) =>
            confirmReservation(ctx, micros, balance, padding, later),
        }),
    onEvent: run.printer.onEvent,
    onPrepared: run.printer.onPrepared,
  };
}
