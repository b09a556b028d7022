import { InsufficientBalanceError, InterruptedError } from "../errors.js";
import { formatUsd } from "../tasks/cost.js";
import type { SubmitRunDeps } from "./submit-request.js";

/**
 * Money is reserved only when the balance covers it and someone said yes: --yes, or a
 * person at a terminal, asked with the padding it includes. Checked whenever anything is
 * to be uploaded, a continued run's parts that never reached the service included.
 */
export async function checkFunds(
  micros: number,
  deps: Pick<SubmitRunDeps, "client" | "confirm">,
  paddingMicros = 0,
  laterMicros = 0,
): Promise<void> {
  if (micros === 0) return;
  const client = await deps.client();
  const { balance_micros } = await client.getBalance();
  if (balance_micros < micros) {
    throw new InsufficientBalanceError(`The balance ${formatUsd(balance_micros)} cannot cover the reservation of ${formatUsd(micros)}.`, {
      hint: "Top up the account, or submit a smaller list.",
    });
  }
  if (deps.confirm && !(await deps.confirm(micros, balance_micros, paddingMicros, laterMicros)))
    throw new InterruptedError("Cancelled; nothing was uploaded.");
}
