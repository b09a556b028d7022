import { ApiCode } from "../../spec/codes.js";
import type { Balance } from "../../spec/task.js";
import type { SandboxCore } from "../core.js";
import type { Exchange } from "../exchange.js";

/** `GET /api/v1/balance`: settles tasks finished by now, then reports; records nothing itself. */
export async function handleBalance(ex: Exchange, core: SandboxCore): Promise<void> {
  await core.tasks.refreshAll(core.options.now());
  const balance: Balance = { balance_micros: core.ledger.balance };
  ex.envelope(ApiCode.OK, "success", balance);
}
