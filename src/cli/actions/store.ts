import { existsSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../../config/paths.js";
import { UsageError } from "../../errors.js";
import { backupStore } from "../../store/backup.js";
import { RESTORE_HINT, StoreDamagedError } from "../../store/health.js";
import { importStore } from "../../store/import.js";
import { sqlitePath } from "../../store/location.js";
import { checkStore, openStore } from "../../store/open.js";
import type { Context } from "../context.js";
import { absolutePath } from "../paths.js";
import { STORE_FILE } from "../services.js";
import { bulkcheckFiles, checkOutputs } from "./shared/destination.js";

/** Opening the store creates or migrates its schema (under the database's own lock), so init is opening it. */
export async function storeInitAction(ctx: Context): Promise<void> {
  const store = await ctx.store();
  const version = schemaVersion(store);
  if (ctx.globals.json) ctx.printer.json({ kind: store.kind, location: store.location, schema_version: version });
  else ctx.printer.note(`The store at ${store.location} (${store.kind}) is ready at schema version ${version}.`);
}

export async function storeStatusAction(ctx: Context): Promise<void> {
  const store = await ctx.store();
  const [stats, runs, tasks] = await Promise.all([store.ledger.stats(), store.runs.list({}), store.tasks.counts()]);
  const status = {
    kind: store.kind,
    location: store.location,
    schema_version: schemaVersion(store),
    runs: runs.length,
    open_runs: runs.filter((run) => run.state === "open").length,
    tasks: tasks.submitted,
    unfinished_tasks: tasks.unfinished,
    tasks_with_results: stats.tasks,
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

export async function storeImportAction(ctx: Context, file: string | undefined): Promise<void> {
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
  const source = await openStore(path, ctx.env);
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

/**
 * `store check`: SQLite's integrity check of the local file (read as it is, so a damaged one
 * is described), or PostgreSQL's schema; then the tables and columns against what this
 * bulkcheck's migrations make. "ok" or one line per problem on stdout; a damaged store
 * then fails with exit 3 and what to do.
 */
export async function storeCheckAction(ctx: Context): Promise<void> {
  const check = await checkStore(await ctx.storeLocation(), ctx.env);
  const version = check.schemaVersion === undefined ? "" : `, schema version ${check.schemaVersion}`;
  if (ctx.globals.json) {
    const { kind, location, schemaVersion, problems } = check;
    ctx.printer.json({ kind, location, schema_version: schemaVersion ?? null, ok: problems.length === 0, problems });
  } else {
    const checked = check.kind === "sqlite" ? "SQLite's integrity check, tables and columns" : "its tables and columns";
    ctx.printer.note(`Checked the store at ${check.location} (${check.kind}${version}): ${checked}.`);
    for (const line of check.problems.length === 0 ? ["ok"] : check.problems) ctx.printer.data(line);
  }
  if (check.problems.length === 0) return;
  const found = check.problems.length === 1 ? check.problems[0]! : `${check.problems.length} problems (listed above)`;
  throw new StoreDamagedError(check.location, found, {
    hint:
      check.kind === "sqlite"
        ? RESTORE_HINT
        : "Restore the schema bulkcheck from your last pg_dump (pg_restore), or ask the database's administrator what changed it.",
  });
}

/**
 * `store backup FILE`: a consistent copy of the local SQLite store while other processes
 * use it (see backupStore), written as every output is (never over the store itself, whole
 * or not at all). A team's PostgreSQL is backed up with pg_dump.
 */
export async function storeBackupAction(ctx: Context, file: string, options: { force?: boolean }): Promise<void> {
  // Told from the location, so that a team's server is not even connected to.
  if (sqlitePath(await ctx.storeLocation()) === undefined) throw postgresBackup();
  await checkOutputs(ctx, { FILE: file }, { force: options.force });
  const store = await ctx.store();
  const path = absolutePath(ctx, file);
  const bytes = await backupStore(store, path, { force: Boolean(options.force), reading: await bulkcheckFiles(ctx), name: file });
  if (bytes === undefined) throw postgresBackup();
  if (ctx.globals.json) ctx.printer.json({ from: store.location, to: path, bytes });
  else ctx.printer.note(`Backed up the store ${store.location} into ${file} (${bytes} bytes).`);
}

function postgresBackup(): UsageError {
  return new UsageError("The store in use is a team's PostgreSQL: back it up with PostgreSQL's own tools.", {
    hint: "pg_dump --schema=bulkcheck --format=custom --file=bulkcheck.dump 'postgres://user@host/database', and pg_restore to restore it.",
  });
}

function schemaVersion(store: object): number | undefined {
  return "schemaVersion" in store && typeof store.schemaVersion === "number" ? store.schemaVersion : undefined;
}
