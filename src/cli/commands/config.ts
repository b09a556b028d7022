import { Command } from "../commander.js";
import type { Invoke } from "../context.js";
import { examples } from "./shared/help.js";
import type { configGetAction, configListAction, configPathAction, configSetAction, configUnsetAction } from "../actions/config.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/config.js");

/** What each `config` subcommand runs; tests pass their own to see what the arguments parse into. */
export interface ConfigRuns {
  set: typeof configSetAction;
  get: typeof configGetAction;
  list: typeof configListAction;
  unset: typeof configUnsetAction;
  path: typeof configPathAction;
}

const CONFIG_RUNS: ConfigRuns = {
  set: async (...args) => (await actions()).configSetAction(...args),
  get: async (...args) => (await actions()).configGetAction(...args),
  list: async (...args) => (await actions()).configListAction(...args),
  unset: async (...args) => (await actions()).configUnsetAction(...args),
  path: async (...args) => (await actions()).configPathAction(...args),
};

/** `bulkcheck config` and its subcommands set, get, list, unset and path. */
/** The settings a profile holds (see SETTINGS in config/settings.ts; a test keeps the two in step). */
const SETTING_KEYS_HELP =
  "api-key, base-url, min-task-size, max-task-size, max-file-bytes, max-in-flight, price.<product>, max-age, ledger, ledger-retention, pad, store, on-done, notify, notify-format, webhook-secret";

export function configCommand(invoke: Invoke, runs: ConfigRuns = CONFIG_RUNS) {
  const config = new Command("config")
    .description("manage settings and the API key (per profile)")
    .addHelpText("after", examples(["bulkcheck config set api-key", "bulkcheck config list --profile prod", "bulkcheck config path"]));
  config
    .command("set")
    .description("set a setting; for api-key and webhook-secret the value comes from a hidden prompt or stdin")
    .argument("<key>", SETTING_KEYS_HELP)
    .argument("[value]", "the value (api-key, webhook-secret: omit, or - to read stdin)")
    .option("--generate", "webhook-secret: make a new random secret, store it, and print it once on stdout")
    .addHelpText(
      "after",
      examples([
        "bulkcheck config set api-key",
        'echo "$KEY" | bulkcheck config set api-key -',
        "bulkcheck config set base-url https://api.example.com",
        "bulkcheck config set max-task-size 100000 --profile prod",
        "bulkcheck config set webhook-secret --generate",
        "bulkcheck config set notify https://hooks.example.com/bulkcheck",
      ]),
    )
    .action((key, value, options, cmd) => invoke(cmd, (ctx) => runs.set(ctx, key, value, options)));
  config
    .command("get")
    .argument("<key>", SETTING_KEYS_HELP)
    .description("print a setting (a secret in it concealed, with --json too)")
    .addHelpText("after", examples(["bulkcheck config get base-url", "bulkcheck config get api-key --json"]))
    .action((key, _options, cmd) => invoke(cmd, (ctx) => runs.get(ctx, key)));
  config
    .command("list")
    .description("list the profile's settings and where each comes from (secrets concealed)")
    .addHelpText("after", examples(["bulkcheck config list", "bulkcheck config list --profile prod --json"]))
    .action((_options, cmd) => invoke(cmd, (ctx) => runs.list(ctx)));
  config
    .command("unset")
    .argument("<key>", SETTING_KEYS_HELP)
    .description("remove a setting from the profile")
    .addHelpText("after", examples(["bulkcheck config unset api-key --profile old"]))
    .action((key, _options, cmd) => invoke(cmd, (ctx) => runs.unset(ctx, key)));
  config
    .command("path")
    .description("print the config file's path")
    .addHelpText("after", examples(["bulkcheck config path"]))
    .action((_options, cmd) => invoke(cmd, (ctx) => runs.path(ctx)));
  return config;
}
