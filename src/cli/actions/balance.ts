import { count } from "../../format-count.js";
import { MICROS_PER_USD } from "../../spec/products.js";
import { StoreUnavailableError } from "../../store/store.js";
import { reservedFor, type Reserved } from "../../tasks/billing.js";
import { formatUsd } from "../../tasks/cost.js";
import type { Context } from "../context.js";

/**
 * The account's balance (the data line, or JSON), and what the tasks of this service and
 * profile that the store has not seen finish hold reserved: the service took it from the
 * balance when they were submitted, and gives back all but what they are charged when they
 * finish. Any check that sees a task finish (status, wait, a download) tells the store. A shared store that cannot be reached leaves that out, with a warning: the balance
 * is the service's to tell.
 */
export async function balanceAction(ctx: Context): Promise<void> {
  const { balance_micros } = await (await ctx.client()).getBalance();
  const reserved = await reservedHere(ctx);
  if (ctx.globals.json) {
    ctx.printer.json({
      balance_micros,
      balance_usd: balance_micros / MICROS_PER_USD,
      reserved_micros: reserved?.micros ?? null,
      reserved_usd: reserved === undefined ? null : reserved.micros / MICROS_PER_USD,
      unfinished_tasks: reserved?.tasks ?? null,
      unfinished_numbers: reserved?.numbers ?? null,
    });
    return;
  }
  ctx.printer.data(`${formatUsd(balance_micros)} (${balance_micros} micros)`);
  if (reserved && reserved.tasks > 0) {
    ctx.printer.note(
      `Reserved by ${count(reserved.tasks)} unfinished task(s) of this store (${count(reserved.numbers)} numbers): ${formatUsd(reserved.micros)}, taken from the balance above until they finish, when what they do not charge comes back. bulkcheck status checks them: a task it sees finished is no longer counted here.`,
    );
  }
}

async function reservedHere(ctx: Context): Promise<Reserved | undefined> {
  try {
    const store = await ctx.store();
    return reservedFor(await store.tasks.unfinished(await ctx.scope()), await ctx.prices());
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    ctx.printer.warn(`What unfinished tasks hold reserved is not known: ${error.message}`);
    return undefined;
  }
}
