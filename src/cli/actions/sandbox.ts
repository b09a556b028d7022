import { configDir } from "../../config/paths.js";
import { resolveWebhookSecret } from "../../config/resolve.js";
import type { ProfileSettings } from "../../config/settings.js";
import { ConfigStore } from "../../config/store.js";
import { newWebhookSecret, webhookKey } from "../../config/webhook-secret.js";
import { webhookSignatureMatches } from "../../notify/webhook.js";
import { UsageError } from "../../errors.js";
import { SERVICE_TYPES } from "../../spec/products.js";
import type { Context } from "../context.js";
import { sandboxOptionsFromFlags, type SandboxFlags } from "./shared/sandbox-options.js";
import { SANDBOX_DEFAULTS, startSandbox, type Sandbox, type SandboxOptions, type WebhookVerifier } from "../../sandbox/index.js";
import { resolvePrices } from "../../sandbox/prices.js";
import { inForeground } from "../foreground.js";
import { openRequestLog } from "./shared/sandbox-log.js";

/** Why the sandbox could not listen, in the user's terms: a port in use or not allowed, or a host not on this machine. */
function listenError(flags: SandboxFlags, error: unknown): unknown {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case "EADDRINUSE":
      return new UsageError(`port ${flags.port} is in use (another sandbox?); pick --port or stop it`, {
        hint: "--port 0 picks any free port (the base URL is printed).",
        cause: error,
      });
    case "EACCES":
      return new UsageError(`port ${flags.port} needs privileges this user does not have; pick --port 1024 or above`, { cause: error });
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return new UsageError(`--host ${flags.host} is not an address of this machine; pick another --host`, {
        hint: "The default, 127.0.0.1, is reachable only from this machine.",
        cause: error,
      });
    default:
      return error;
  }
}

/**
 * The smallest task a sandbox that sets up a profile accepts, unless --min-task-size says
 * otherwise: small enough that a first list of a few hundred numbers just works (the
 * service's own minimum, 500, is the default otherwise).
 */
const PROFILE_MIN_TASK_SIZE = 1;

/**
 * Serves the emulator until Ctrl-C (or SIGTERM); the base URL and key go to
 * stderr, or to stdout as JSON, with how to stop it for the way it was started.
 * With --profile NAME it first points that profile at itself (see pointProfile), its
 * smallest task 1 unless --min-task-size is given.
 */
export async function sandboxAction(ctx: Context, flags: SandboxFlags): Promise<void> {
  const requestLog = await openRequestLog(ctx, flags.log, inForeground);
  const profile = ctx.globals.profile;
  try {
    const options = {
      ...sandboxOptionsFromFlags(flags),
      ...(profile !== undefined && flags.minTaskSize === undefined ? { minTaskSize: PROFILE_MIN_TASK_SIZE } : {}),
    };
    const sandbox = await startSandbox({ ...options, log: requestLog.write, verifyWebhook: webhookVerifier(ctx) }).catch(
      (error: unknown) => {
        throw listenError(flags, error);
      },
    );
    // Written before it says it listens: once it does, the profile is ready.
    const pointed = profile === undefined ? undefined : await pointProfile(ctx, profile, sandbox, options);
    if (ctx.globals.json) {
      ctx.printer.json({
        base_url: sandbox.url,
        api_key: sandbox.apiKey,
        webhook_url: sandbox.webhookUrl,
        ...(profile === undefined ? {} : { profile }),
      });
    } else {
      ctx.printer.note(`bulkcheck sandbox listening on ${sandbox.url}`);
      ctx.printer.note(`API key: ${sandbox.apiKey}`);
      if (!pointed)
        ctx.printer.note(`Try it: export BULKCHECK_BASE_URL=${sandbox.url} BULKCHECK_API_KEY=${sandbox.apiKey}; bulkcheck balance`);
    }
    pointed?.();
    if (!ctx.globals.json) {
      ctx.printer.note(
        `Webhook receiver: ${sandbox.webhookUrl} (--notify ${sandbox.webhookUrl}; curl -s ${sandbox.webhookUrl} lists what it received)`,
      );
    }
    ctx.printer.note(inForeground() ? "Stop with Ctrl-C." : `Stop with: kill ${process.pid}`);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await sandbox.close();
  } finally {
    await requestLog.close();
  }
}

/**
 * How the sandbox's webhook receiver verifies a delivery: with the secret bulkcheck signs with
 * for this profile (BULKCHECK_WEBHOOK_SECRET, else the profile's webhook-secret), read again
 * for each delivery, so one set after the sandbox started counts. Null when there is none
 * (or the config cannot be read): then nothing can be said. The secret never leaves here.
 */
function webhookVerifier(ctx: Context): WebhookVerifier {
  return (delivery) => {
    let secret: string | undefined;
    try {
      secret = resolveWebhookSecret(ctx.env, new ConfigStore(configDir(ctx.env)).profile(ctx.profileName))?.value;
    } catch {
      return null;
    }
    if (secret === undefined) return null;
    return webhookSignatureMatches(webhookKey(secret), delivery.id, delivery.timestamp, delivery.body, delivery.signature);
  };
}

/**
 * `sandbox --profile NAME`: writes into the profile what a client needs to use this sandbox as
 * it is: its base URL and key (kept like any API key, in the config file alone), its task
 * and upload limits and its prices, so that `bulkcheck --profile NAME submit ...` plans
 * tasks it accepts and costs them as it charges; and, when the profile has none, a webhook
 * secret (never shown), so that --notify to the sandbox's receiver is signed and verified. Said on stderr, with the variables of this
 * shell that would override the profile (by the function it returns, called once the sandbox
 * has said where it listens).
 */
async function pointProfile(ctx: Context, profile: string, sandbox: Sandbox, options: Partial<SandboxOptions>): Promise<() => void> {
  const limit = <K extends "minTaskSize" | "maxTaskSize" | "maxFileBytes" | "maxInFlight">(key: K) => options[key] ?? SANDBOX_DEFAULTS[key];
  const prices = resolvePrices(options.prices ?? {});
  const settings: ProfileSettings = {
    "base-url": sandbox.url,
    "api-key": sandbox.apiKey,
    "min-task-size": limit("minTaskSize"),
    "max-task-size": limit("maxTaskSize"),
    "max-file-bytes": limit("maxFileBytes"),
    "max-in-flight": limit("maxInFlight"),
    ...Object.fromEntries(SERVICE_TYPES.map((product) => [`price.${product}`, prices[product]])),
  };
  const config = await ctx.config();
  const generated = config.profile(profile)["webhook-secret"] === undefined;
  if (generated) settings["webhook-secret"] = newWebhookSecret();
  await config.setAll(profile, settings);
  return () => {
    ctx.printer.note(
      `Profile "${profile}" now points at this sandbox: base-url ${sandbox.url}, its API key, min-task-size ${settings["min-task-size"]}, max-task-size ${settings["max-task-size"]} and its prices${generated ? ", and a new webhook-secret (never shown; the sandbox's webhook receiver verifies with it)" : ""}. Use it with: bulkcheck --profile ${profile} ...   (or export BULKCHECK_PROFILE=${profile})`,
    );
    const overriding = ["BULKCHECK_BASE_URL", "BULKCHECK_API_KEY"].filter((name) => ctx.env[name] !== undefined);
    if (overriding.length > 0) {
      ctx.printer.warn(
        `${overriding.join(" and ")} ${overriding.length === 1 ? "is" : "are"} set in this shell and override${overriding.length === 1 ? "s" : ""} the profile: unset ${overriding.join(" ")} to use it.`,
      );
    }
  };
}
