import { MICROS_PER_USD } from "../../spec/products.js";
import { formatUsd } from "../../tasks/cost.js";
import type { Context } from "../context.js";

export async function balanceRun(ctx: Context): Promise<void> {
  const { balance_micros } = await (await ctx.client()).getBalance();
  if (ctx.globals.json) {
    ctx.printer.json({ balance_micros, balance_usd: balance_micros / MICROS_PER_USD });
    return;
  }
  ctx.printer.data(`${formatUsd(balance_micros)} (${balance_micros} micros)`);
}
