import { existsSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../../config/paths.js";
import { UsageError } from "../../errors.js";
import { Command } from "../commander.js";
import type { Context, Invoke } from "../context.js";
import { absolutePath } from "../paths.js";
import { STORE_FILE } from "../services.js";
import { examples } from "./shared/help.js";

/** `bulkcheck store init|status|import`: where runs, tasks and the ledger live (a team's PostgreSQL, or the local SQLite file). */
export function storeCommand(invoke: Invoke) {
  const command = new Command("store")
    .description("where runs, tasks and the ledger live: create or migrate it, see it, import a machine's local store into it")
    .addHelpText(
      "after",
      examples([
        "bulkcheck config set store postgres://analyst@db.example.com/bulkcheck",
        "bulkcheck store init",
        "bulkcheck store import",
        "bulkcheck store status --json",
      ]),
    );
  command.addCommand(
    new Command("init")
      .description("create the store's schema, or migrate it to this version (idempotent; safe from several machines at once)")
      .action((_o, cmd) => invoke(cmd, (ctx) => storeInit(ctx))),
  );
  command.addCommand(
    new Command("status")
      .description("which store is in use, its schema version, and what it holds")
      .action((_o, cmd) => invoke(cmd, (ctx) => storeStatus(ctx))),
  );
  command.addCommand(
    new Command("import")
      .description("copy a local SQLite store (default: this machine's) into the store in use: runs, tasks and the ledger; idempotent")
      .argument("[file]", "the SQLite store to copy (default: bulkcheck.db in the state directory)")
      .action((file, _o, cmd) => invoke(cmd, (ctx) => storeImport(ctx, file))),
  );
  return command;
}

/** Opening the store creates or migrates its schema (under the database's own lock), so init is opening it. */
async function storeInit(ctx: Context): Promise<void> {
  const store = await ctx.store();
  const version = schemaVersion(store);
  if (ctx.globals.json) ctx.printer.json({ kind: store.kind, location: store.location, schema_version: version });
  else ctx.printer.note(`The store at ${store.location} (${store.kind}) is ready at schema version ${version}.`);
}

async function storeStatus(ctx: Context): Promise<void> {
  const store = await ctx.store();
  const [stats, runs] = await Promise.all([store.stats(), store.runs({})]);
  const status = {
    kind: store.kind,
    location: store.location,
    schema_version: schemaVersion(store),
    runs: runs.length,
    open_runs: runs.filter((run) => run.state === "open").length,
    tasks: stats.tasks,
    results: stats.results,
    numbers: stats.numbers,
    ...(stats.bytes === undefined ? {} : { bytes: stats.bytes }),
  };
  if (ctx.globals.json) {
    ctx.printer.json(status);
    return;
  }
  for (const [name, value] of Object.entries(status)) ctx.printer.data(`${name.replaceAll("_", " ")}\t${value}`);
}

async function storeImport(ctx: Context, file: string | undefined): Promise<void> {
  const target = await ctx.store();
  const path = file === undefined ? join(stateDir(ctx.env), STORE_FILE) : absolutePath(ctx, file);
  if (target.kind === "sqlite" && target.location === path) {
    throw new UsageError(`The store in use is ${path} itself: there is nothing to import.`, {
      hint: "Point bulkcheck at the shared store first: bulkcheck config set store postgres://user@host/database",
    });
  }
  if (!existsSync(path)) {
    throw new UsageError(`There is no local store at ${path} to import.`, {
      hint: "Give the path of a bulkcheck.db: bulkcheck store import FILE",
    });
  }
  const { SqliteStore } = await import("../../store/sqlite-store.js");
  const { importStore } = await import("../../store/import.js");
  const source = SqliteStore.open(path);
  try {
    const summary = await importStore(source, target);
    if (ctx.globals.json) ctx.printer.json({ from: path, to: target.location, ...summary });
    else {
      ctx.printer.note(
        `Copied ${summary.runs} run(s), ${summary.tasks} task(s) and ${summary.results} result(s) from ${path} into ${target.location}` +
          (summary.abandoned > 0
            ? `; ${summary.abandoned} open run(s) were copied as abandoned (the same command has an open run there).`
            : "."),
      );
    }
  } finally {
    await source.close();
  }
}

function schemaVersion(store: object): number | undefined {
  return "schemaVersion" in store && typeof store.schemaVersion === "number" ? store.schemaVersion : undefined;
}
