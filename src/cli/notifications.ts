import { hostname } from "node:os";
import { DEFAULT_USER_AGENT } from "../api/client.js";
import { resolveWebhookSecret } from "../config/resolve.js";
import { notifyUrl, settingSpec, urlOrigin } from "../config/settings.js";
import { UsageError } from "../errors.js";
import { commandWords } from "../config/command-words.js";
import { hookInheritedEnvironment, ON_DONE_WITHIN_MS, runHook, type HookEnd } from "../notify/on-done.js";
import { changeCounts, chatText, hookEnvironment, SUMMARY_TYPE, SUMMARY_VERSION, type EndSummary } from "../notify/summary.js";
import { DELIVERY_POLICY, deliverWebhook, type DeliveryEnd } from "../notify/webhook.js";
import { webhookKey } from "../config/webhook-secret.js";
import { formatDuration } from "../api/attempts.js";
import { MICROS_PER_USD } from "../spec/products.js";
import type { Context } from "./context.js";
import { EXIT_CODES } from "./exit-codes.js";
import type { Failure } from "./failure.js";

/** The flags of the commands that tell someone when they end (see notifyOptions in commands/shared/help.ts). */
export interface NotifyFlags {
  /** --on-done CMD; false for --no-on-done. */
  onDone?: string | false;
  /** --notify URL; false for --no-notify. */
  notify?: string | false;
  notifyFormat?: "standard" | "slack";
  /** submit's and retry-failed's --wait: they end when their tasks do only with it. */
  wait?: boolean;
}

/** How the command ended, as main knows it. */
export interface CommandEnd {
  exitCode: number;
  /** Why it failed; none when it succeeded. */
  failure?: Failure | undefined;
}

/**
 * With --timeout, what is kept of it for telling how the command ended: a tenth, at most 5 s
 * (an attempt or two of a webhook, a command such as mail). The command's own work stops that
 * much sooner, so that one stopped by its --timeout still tells (what a receiver most needs to
 * hear about) and the whole process still ends within --timeout.
 */
function keptForEndingMs(timeoutSeconds: number): number {
  return Math.min(5_000, timeoutSeconds * 100);
}

/**
 * What a command does once it has ended, from its flags, then the profile's on-done, notify
 * and notify-format: read and checked before the command does anything, so a broken command
 * line, URL or missing secret is a usage error now rather than a silent miss after an hour's
 * run. Undefined when there is nothing to do. `canWait` says the command takes --wait
 * (submit, retry-failed): without it they end before their tasks do, so an explicit flag is
 * refused and the profile's settings are not used. Returns the function main calls at the end.
 */
export async function notificationsOf(
  ctx: Context,
  command: string,
  flags: NotifyFlags,
  canWait: boolean,
  stopped: AbortSignal,
): Promise<((end: CommandEnd) => Promise<void>) | undefined> {
  if (canWait && !flags.wait) {
    const given = flags.onDone ? "--on-done" : flags.notify ? "--notify" : undefined;
    if (given) {
      throw new UsageError(`${given} needs --wait: without it, ${command} ends as soon as its tasks are submitted.`, {
        hint: `Add --wait, or tell someone when the tasks end: bulkcheck wait ID ${given} …`,
      });
    }
    return undefined;
  }
  const profile = (await ctx.config()).profile(ctx.profileName);
  const setting = (key: "on-done" | "notify" | "notify-format") => {
    const value = profile[key];
    return typeof value === "string" ? value : undefined;
  };
  const onDoneText = flags.onDone === false ? undefined : (flags.onDone ?? setting("on-done"));
  const onDone = onDoneText === undefined ? undefined : commandWords(onDoneText);
  const notifyText = flags.notify === false ? undefined : (flags.notify ?? setting("notify"));
  const url = notifyText === undefined ? undefined : notifyUrl(notifyText);
  const format =
    flags.notifyFormat ?? (String(settingSpec("notify-format").parse(setting("notify-format") ?? "standard")) as "standard" | "slack");
  const secret = url && format === "standard" ? resolveWebhookSecret(ctx.env, profile) : undefined;
  if (url && format === "standard" && !secret) {
    throw new UsageError(`--notify signs what it posts, and no webhook secret is set for profile "${ctx.profileName}".`, {
      hint: "Make one and give it to the receiver: bulkcheck config set webhook-secret --generate   (or store yours: bulkcheck config set webhook-secret)\nA chat's incoming webhook needs none: --notify-format slack",
    });
  }
  if (!onDone && !url) return undefined;
  if (ctx.deadline.seconds !== undefined) ctx.deadline.keepForEnding(keptForEndingMs(ctx.deadline.seconds));
  ctx.outcome.awaited = true;
  const startedAt = new Date(ctx.now()).toISOString();
  return async (end) => {
    const summary = endSummary(ctx, command, startedAt, end);
    // The standard format is JSON, which JSON.stringify writes whole; a chat's text is markup, escaped in chatText.
    const body = format === "slack" ? JSON.stringify({ text: chatText(summary) }) : JSON.stringify(summary);
    // Whatever else goes wrong (a proxy variable undici cannot read, a program name the system refuses) is a warning too.
    const warn = (flag: string) => (error: unknown) =>
      ctx.printer.warn(`${flag} failed: ${error instanceof Error ? error.message : String(error)}`);
    await Promise.all([
      onDone && runOnDone(ctx, onDone, summary, stopped).catch(warn("--on-done")),
      url && notify(ctx, url, body, secret?.value, stopped).catch(warn("--notify")),
    ]);
  };
}

/** The summary of how the command ended (see EndSummary): from its outcome, as its action filled it in, and its exit. */
function endSummary(ctx: Context, command: string, startedAt: string, end: CommandEnd): EndSummary {
  const { outcome } = ctx;
  const failed = end.failure !== undefined && end.exitCode !== 0 ? end.failure : undefined;
  return {
    type: SUMMARY_TYPE,
    version: SUMMARY_VERSION,
    timestamp: new Date(ctx.now()).toISOString(),
    data: {
      command,
      exit_code: end.exitCode,
      status: failed ? failed.code : end.exitCode === EXIT_CODES.changed ? "changed" : "ok",
      error: failed ? { code: failed.code, message: failed.message, hint: failed.hint ?? null } : null,
      host: hostname(),
      profile: ctx.profileName,
      started_at: startedAt,
      run: outcome.run ?? null,
      tasks: outcome.tasks,
      output: outcome.output ?? null,
      changes: outcome.changes ? changeCounts(outcome.changes) : null,
      charged_micros: outcome.chargedMicros ?? null,
      charged_usd: outcome.chargedMicros === undefined ? null : outcome.chargedMicros / MICROS_PER_USD,
    },
  };
}

/**
 * --on-done: the command, with the summary in its environment and on its stdin; what it
 * prints goes to stderr (its stdout not under --quiet), never to stdout, which is data.
 */
async function runOnDone(ctx: Context, argv: string[], summary: EndSummary, stopped: AbortSignal): Promise<void> {
  const end = await runHook({
    argv,
    cwd: ctx.cwd,
    env: { ...hookInheritedEnvironment(ctx.env), ...hookEnvironment(summary) },
    input: `${JSON.stringify(summary)}\n`,
    withinMs: Math.min(ON_DONE_WITHIN_MS, ctx.deadline.remainingForEndingMs() ?? Infinity),
    signal: stopped,
    stdout: ctx.globals.quiet ? undefined : ctx.io.stderr,
    stderr: ctx.io.stderr,
  });
  const problem = hookProblem(end);
  // Only the program's name: its arguments may hold what the user would rather not see repeated (a token).
  if (problem) ctx.printer.warn(`the --on-done command ${argv[0]} ${problem}; the exit code stays ${summary.data.exit_code}.`);
}

function hookProblem(end: HookEnd): string | undefined {
  switch (end.type) {
    case "exited":
      return end.code === 0 ? undefined : `exited with ${end.code}`;
    case "killed":
      return `was killed by ${end.signal}`;
    case "timed-out":
      return `was still running after ${formatDuration(end.afterMs)} and was stopped`;
    case "stopped":
      return undefined;
    case "not-started": {
      const code = (end.error as NodeJS.ErrnoException).code;
      return code === "ENOENT" ? "was not found (give its path, or check PATH)" : `could not start (${code ?? end.error.message})`;
    }
  }
}

/**
 * --notify: the summary POSTed (signed when a secret is given), within the policy's 30 s and
 * what is left of --timeout (at least what was kept for it, see keptForEndingMs). What happens
 * is a note or a warning, never the exit code; the URL shows only as its origin.
 */
async function notify(ctx: Context, url: URL, body: string, secret: string | undefined, stopped: AbortSignal): Promise<void> {
  const budgetMs = Math.min(DELIVERY_POLICY.deadlineMs, ctx.deadline.remainingForEndingMs() ?? Infinity);
  const end = await deliverWebhook(
    { url, body, key: secret === undefined ? undefined : webhookKey(secret), budgetMs, userAgent: DEFAULT_USER_AGENT },
    { now: ctx.now, sleep: ctx.sleep, random: ctx.random, signal: stopped },
  );
  reportDelivery(ctx, urlOrigin(url.href), end);
}

function reportDelivery(ctx: Context, where: string, end: DeliveryEnd): void {
  const tries = end.attempts === 1 ? "" : ` after ${end.attempts} attempts`;
  switch (end.type) {
    case "delivered":
      ctx.printer.note(`Notified ${where} (${end.status}${tries}; webhook-id ${end.id}).`);
      return;
    case "refused":
      ctx.printer.warn(`${where} refused the notification with ${end.status}${tries}; it is not sent again (webhook-id ${end.id}).`);
      return;
    case "gave-up":
      ctx.printer.warn(`the notification to ${where} was not delivered: ${end.last}${tries} (webhook-id ${end.id}).`);
      return;
    case "stopped":
      return;
  }
}
