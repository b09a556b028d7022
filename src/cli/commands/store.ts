import { Command } from "../commander.js";
import type { Invoke } from "../context.js";
import { examples } from "./shared/help.js";

/** What the command does, loaded when it runs: building the command tree loads none of it. */
const actions = () => import("../actions/store.js");

/** `bulkcheck store init|status|import|check|backup`: where runs, tasks and the ledger live (a team's PostgreSQL, or the local SQLite file). */
export function storeCommand(invoke: Invoke) {
  const command = new Command("store")
    .description(
      "where runs, tasks and the ledger live: create or migrate it, see it, import a machine's local store into it, check it, back it up",
    )
    .addHelpText(
      "after",
      examples([
        "bulkcheck config set store postgres://analyst@db.example.com/bulkcheck",
        "bulkcheck store init",
        "bulkcheck store import",
        "bulkcheck store status --json",
        "bulkcheck store check",
        "bulkcheck store backup ~/backups/bulkcheck.db",
      ]),
    );
  command.addCommand(
    new Command("init")
      .description("create the store's schema, or migrate it to this version (idempotent; safe from several machines at once)")
      .addHelpText("after", examples(["BULKCHECK_STORE_URL=postgres://analyst@db.example.com/bulkcheck bulkcheck store init"]))
      .action((_o, cmd) => invoke(cmd, async (ctx) => (await actions()).storeInitAction(ctx))),
  );
  command.addCommand(
    new Command("status")
      .description("which store is in use, its schema version, and what it holds")
      .addHelpText("after", examples(["bulkcheck store status", "bulkcheck store status --json"]))
      .action((_o, cmd) => invoke(cmd, async (ctx) => (await actions()).storeStatusAction(ctx))),
  );
  command.addCommand(
    new Command("import")
      .description(
        "copy a local SQLite store (default: this machine's) into the store in use: runs, tasks and the ledger's results, which are then erased from the local file; idempotent",
      )
      .argument("[file]", "the SQLite store to copy (default: bulkcheck.db in the state directory)")
      .addHelpText("after", examples(["bulkcheck store import", "bulkcheck store import /backup/laptop/bulkcheck.db"]))
      .action((file, _o, cmd) => invoke(cmd, async (ctx) => (await actions()).storeImportAction(ctx, file))),
  );
  command.addCommand(
    new Command("check")
      .description(
        "check the store: SQLite's integrity check of the local file, or a team's PostgreSQL schema, and every table and column; exit 3 when it is damaged",
      )
      .addHelpText("after", examples(["bulkcheck store check", "bulkcheck store check --json"]))
      .action((_o, cmd) => invoke(cmd, async (ctx) => (await actions()).storeCheckAction(ctx))),
  );
  command.addCommand(
    new Command("backup")
      .description(
        "copy the local SQLite store into FILE, consistent while other bulkcheck processes use it (a team's PostgreSQL: pg_dump)",
      )
      .argument("<file>", "where to write the copy (0600); put in the store's place, it is the store as it was")
      .option("--force", "replace FILE if it exists")
      .addHelpText(
        "after",
        examples(["bulkcheck store backup ~/backups/bulkcheck-$(date +%F).db", "bulkcheck store backup store.db --force --json"]),
      )
      .action((file: string, options: { force?: boolean }, cmd) =>
        invoke(cmd, async (ctx) => (await actions()).storeBackupAction(ctx, file, options)),
      ),
  );
  return command;
}
