import { existsSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../../config/paths.js";
import { UsageError } from "../../errors.js";
import type { Context } from "../context.js";
import { absolutePath } from "../paths.js";
import { STORE_FILE } from "../services.js";
import { SqliteStore } from "../../store/sqlite-store.js";
import { importStore } from "../../store/import.js";

/** Opening the store creates or migrates its schema (under the database's own lock), so init is opening it. */
export async function storeInit(ctx: Context): Promise<void> {
  const store = await ctx.store();
  const version = schemaVersion(store);
  if (ctx.globals.json) ctx.printer.json({ kind: store.kind, location: store.location, schema_version: version });
  else ctx.printer.note(`The store at ${store.location} (${store.kind}) is ready at schema version ${version}.`);
}

export async function storeStatus(ctx: Context): Promise<void> {
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

export async function storeImport(ctx: Context, file: string | undefined): Promise<void> {
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
      if (summary.erased > 0) {
        ctx.printer.note(
          `Erased the ${summary.erased} result(s) now held there from ${path}, as ledger forget erases: they are no longer on this machine twice.`,
        );
      }
    }
  } finally {
    await source.close();
  }
}

function schemaVersion(store: object): number | undefined {
  return "schemaVersion" in store && typeof store.schemaVersion === "number" ? store.schemaVersion : undefined;
}
