/**
 * One step of a store's schema: the statements that bring it from the version before to
 * `version`. Each engine keeps its own ordered list (sqlite.ts, postgres.ts), versions
 * counting 1, 2, … without a gap: the version a store records is the last step it has run.
 */
export interface Migration {
  version: number;
  statements: string;
}

/** The latest version of a list of migrations: what a store opened by this bulkcheck ends at. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.at(-1)?.version ?? 0;
}

/** The migrations a store at `version` has not run yet, in order. */
export function pendingMigrations(migrations: readonly Migration[], version: number): Migration[] {
  return migrations.filter((migration) => migration.version > version);
}

/** The migrations a store at `version` has run, in order. */
export function appliedMigrations(migrations: readonly Migration[], version: number): Migration[] {
  return migrations.filter((migration) => migration.version <= version);
}
