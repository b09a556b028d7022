import { MICROS_PER_USD } from "../../spec/products.js";
import { formatUsd } from "../../tasks/cost.js";
import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { examples, requestTimeoutOption, timeoutOption } from "./shared/help.js";

/** `bulkcheck balance`. */
export function balanceCommand(invoke: Invoke, run = balanceRun) {
  return new Command("balance")
    .description("show the account balance")
    .addOption(timeoutOption())
    .addOption(requestTimeoutOption())
    .addHelpText("after", examples(["bulkcheck balance", "bulkcheck balance --json | jq .balance_micros"]))
    .action((_options, cmd) => invoke(cmd, (ctx) => run(ctx)));
}

export async function balanceRun(ctx: Context): Promise<void> {
  const { balance_micros } = await (await ctx.client()).getBalance();
  if (ctx.globals.json) {
    ctx.printer.json({ balance_micros, balance_usd: balance_micros / MICROS_PER_USD });
    return;
  }
  ctx.printer.data(`${formatUsd(balance_micros)} (${balance_micros} micros)`);
}
