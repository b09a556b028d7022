import { settingSpec, SETTINGS, isSettingKey, shownSetting, type SettingKey } from "../../config/settings.js";
import { UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { canPrompt, promptSecret, readAllStdin } from "../prompt.js";
import { printTable } from "../table.js";

/** What `config set` takes besides the key and value. */
export interface ConfigSetOptions {
  /** Make a new random value (webhook-secret), store it and print it once. */
  generate?: boolean;
}

/**
 * `config set`: a secret (the API key, the webhook secret) only from a hidden prompt or
 * stdin, never from the command line; or, with --generate, a new one, printed once on
 * stdout for the receiver and never again.
 */
export async function configSetAction(
  ctx: Context,
  name: string,
  value: string | undefined,
  options: ConfigSetOptions = {},
): Promise<void> {
  const spec = settingSpec(name);
  if (options.generate) return generateSetting(ctx, name, value);
  let text = value;
  if (spec.secret) {
    if (value !== undefined && value !== "-") {
      throw new UsageError(`Refusing to take the ${spec.secret} from the command line, where shell history and \`ps\` would keep it.`, {
        hint: `Run \`bulkcheck config set ${name}\` and paste it at the prompt, or: echo "$SECRET" | bulkcheck config set ${name} -`,
      });
    }
    text =
      value === undefined && canPrompt(ctx.io)
        ? await promptSecret(ctx.printer, `${capitalised(spec.secret)} (input hidden): `, {
            signal: ctx.signal,
            cancelled: { message: `Cancelled; the ${spec.secret} was not changed.` },
          })
        : firstLine(await readAllStdin(ctx.io));
  } else if (text === undefined || text === "-") {
    text = text === "-" ? firstLine(await readAllStdin(ctx.io)) : undefined;
    if (text === undefined) throw new UsageError(`config set ${name} needs a value.`);
  }
  const stored = spec.parse(text);
  spec.checkStored?.(stored);
  await (await ctx.config()).set(ctx.profileName, spec.key, stored);
  ctx.printer.note(`Set ${name} for profile "${ctx.profileName}" to ${display(spec.key, stored)}.`);
}

/** `config set KEY --generate`: the one time a secret is shown whole, on stdout, for the other end to keep. */
async function generateSetting(ctx: Context, name: string, value: string | undefined): Promise<void> {
  const spec = settingSpec(name);
  if (!spec.generate) {
    const generated = Object.keys(SETTINGS).filter((key) => isSettingKey(key) && SETTINGS[key].generate);
    throw new UsageError(`config set ${name} has no --generate.`, { hint: `--generate makes a value for: ${generated.join(", ")}` });
  }
  if (value !== undefined) throw new UsageError("--generate makes the value: give none.");
  const made = String(spec.parse(spec.generate()));
  await (await ctx.config()).set(ctx.profileName, spec.key, made);
  if (ctx.globals.json) ctx.printer.json({ key: name, value: made });
  else ctx.printer.data(made);
  ctx.printer.note(
    `Set ${name} for profile "${ctx.profileName}" to the new value printed above: give it to the receiver now, it is never shown again (config get shows ${display(spec.key, made)}).`,
  );
}

export async function configGetAction(ctx: Context, name: string): Promise<void> {
  const spec = settingSpec(name);
  const value = (await ctx.config()).profile(ctx.profileName)[spec.key];
  if (value === undefined) {
    throw new UsageError(`${name} is not set in profile "${ctx.profileName}".`, { hint: `Set it with: bulkcheck config set ${name} ...` });
  }
  if (ctx.globals.json) ctx.printer.json({ key: name, value: shownSetting(spec.key, value, "json") });
  else ctx.printer.data(display(spec.key, value));
}

/** Where a setting's value comes from, as config list says it. */
type SettingSource = "environment" | `profile ${string}` | "default" | "not set";

/**
 * Every setting with the value in force, where it comes from (the environment,
 * the profile, or the default) and its default, so nothing is hidden: a limit
 * nobody set still shows the 500 it is, and a profile's value that a variable of
 * this shell overrides is named, with the variable.
 */
export async function configListAction(ctx: Context): Promise<void> {
  const profile = (await ctx.config()).profile(ctx.profileName);
  const settings = Object.keys(SETTINGS)
    .filter(isSettingKey)
    .map((key) => {
      const spec = SETTINGS[key];
      const { variable } = spec;
      const env = variable === undefined ? undefined : ctx.env[variable];
      const stored = profile[key];
      const fallback = spec.defaultValue === undefined ? undefined : display(key, spec.defaultValue);
      // A blank secret's variable is in force (an error), as resolveApiKey and resolveWebhookSecret decide; a blank URL is not.
      const fromEnv = env !== undefined && (spec.secret !== undefined || env.trim() !== "");
      const [value, source]: [string | undefined, SettingSource] = fromEnv
        ? [env.trim() === "" ? "(blank)" : display(key, env.trim()), "environment"]
        : stored !== undefined
          ? [display(key, stored), `profile ${ctx.profileName}`]
          : [fallback, fallback === undefined ? "not set" : "default"];
      const overridden = fromEnv && stored !== undefined ? display(key, stored) : undefined;
      return { key, value, fallback, source, variable: fromEnv ? variable : undefined, overridden };
    });
  if (ctx.globals.json) {
    ctx.printer.json({
      profile: ctx.profileName,
      settings: Object.fromEntries(
        settings.map(({ key, value, fallback, source, variable, overridden }) => [
          key,
          {
            value: value ?? null,
            source,
            default: fallback ?? null,
            ...(variable === undefined ? {} : { variable }),
            ...(overridden === undefined ? {} : { profile_value: overridden }),
          },
        ]),
      ),
    });
    return;
  }
  const rows = settings.map(({ key, value, fallback, source, variable }) => [
    key,
    value ?? "",
    variable === undefined ? source : `${source} (${variable})`,
    fallback ?? "",
  ]);
  printTable(
    ctx.printer,
    [{ header: "SETTING", whole: true }, { header: "VALUE" }, { header: "SOURCE" }, { header: "DEFAULT", dropOrder: 1 }],
    rows,
  );
  for (const { key, variable, overridden } of settings) {
    if (overridden === undefined) continue;
    ctx.printer.note(
      `Profile "${ctx.profileName}" sets ${key} to ${overridden}, and ${variable} overrides it while it is set: unset ${variable} to use the profile's.`,
    );
  }
  if (Object.keys(profile).length === 0) {
    ctx.printer.note(`Profile "${ctx.profileName}" has no settings of its own yet. Start with: bulkcheck config set base-url https://...`);
  }
}

export async function configUnsetAction(ctx: Context, name: string): Promise<void> {
  const spec = settingSpec(name);
  const removed = await (await ctx.config()).unset(ctx.profileName, spec.key);
  ctx.printer.note(removed ? `Removed ${name} from profile "${ctx.profileName}".` : `${name} was not set in profile "${ctx.profileName}".`);
}

export async function configPathAction(ctx: Context): Promise<void> {
  const path = (await ctx.config()).path;
  if (ctx.globals.json) ctx.printer.json({ path });
  else ctx.printer.data(path);
}

/** A value as a person sees it, a secret concealed (see shownSetting). */
function display(key: SettingKey, value: string | number): string {
  return String(shownSetting(key, value));
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function firstLine(text: string): string {
  return text.split(/\r?\n/)[0] ?? "";
}
