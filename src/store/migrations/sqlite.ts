import type { Migration } from "./migration.js";

/**
 * The embedded store's schema, as numbered migrations: the database's `user_version` says
 * which have run (the latest version), and each runs once, in its own transaction, in order.
 *
 * Results are one row per number and task, clustered by task (a task's rows are written
 * and read together), with an index by number for lookups, changes and erasure. Numbers
 * are stored as integers (an E.164 identifier has at most 15 digits, exact in SQLite's
 * 64-bit integers and in a JavaScript number); a task's date and scope live once, in its
 * task row, not in each result. PostgreSQL's list (postgres.ts) makes the same tables, keys
 * and indexes in its own types; a test compares the two.
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: `
  CREATE TABLE scopes (
    id INTEGER PRIMARY KEY,
    base_url TEXT NOT NULL,
    profile TEXT NOT NULL,
    UNIQUE (base_url, profile)
  );
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    identity TEXT NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    product TEXT NOT NULL,
    country TEXT,
    source TEXT NOT NULL,
    settings TEXT NOT NULL,
    prepared TEXT,
    plan TEXT,
    output TEXT,
    host TEXT,
    os_user TEXT,
    lease_host TEXT,
    lease_pid INTEGER,
    lease_nonce TEXT,
    heartbeat_at TEXT,
    note TEXT
  );
  CREATE UNIQUE INDEX runs_open ON runs (scope_id, identity) WHERE state = 'open';
  CREATE INDEX runs_started ON runs (started_at);
  CREATE TABLE tasks (
    ref INTEGER PRIMARY KEY,
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    run_id TEXT REFERENCES runs (id),
    part INTEGER,
    parts INTEGER,
    idempotency_key TEXT,
    task_id TEXT,
    product TEXT NOT NULL,
    country TEXT,
    count INTEGER,
    sha256 TEXT,
    submitted_at TEXT,
    upload_started_at TEXT,
    created_at TEXT,
    status TEXT,
    total INTEGER,
    success_cnt INTEGER,
    failure_cnt INTEGER,
    checked_at TEXT,
    retry_of TEXT,
    replayed INTEGER,
    columns TEXT,
    recorded_at TEXT,
    staged_file TEXT,
    staged_bytes INTEGER,
    staged_sha256 TEXT
  );
  CREATE UNIQUE INDEX tasks_key ON tasks (scope_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX tasks_task_id ON tasks (task_id);
  CREATE INDEX tasks_run ON tasks (run_id);
  CREATE INDEX tasks_checked ON tasks (scope_id, product, checked_at);
  CREATE TABLE results (
    task_ref INTEGER NOT NULL REFERENCES tasks (ref),
    identifier INTEGER NOT NULL,
    activated TEXT,
    carrier TEXT,
    underlying_carrier TEXT,
    number_type TEXT,
    country_code TEXT,
    region TEXT,
    city TEXT,
    extra TEXT,
    PRIMARY KEY (task_ref, identifier)
  ) WITHOUT ROWID;
  CREATE INDEX results_identifier ON results (identifier);
  CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );`,
  },
  // The numbers each task was given, written before its upload: while the task is in flight
  // they are what a later run must not pay for again, and once its result is recorded those
  // without a result row are the numbers the service checked and answered "no result".
  {
    version: 2,
    statements: `
  CREATE TABLE task_numbers (
    task_ref INTEGER NOT NULL REFERENCES tasks (ref),
    identifier INTEGER NOT NULL,
    PRIMARY KEY (task_ref, identifier)
  ) WITHOUT ROWID;
  CREATE INDEX task_numbers_identifier ON task_numbers (identifier);`,
  },
  // What `ledger forget` erased while runs were open that could bring it back (issue 35): each
  // erasure (a forget) with the last task reference given its numbers before it, the product it
  // was limited to (NULL: every product) and the key of its numbers' hashes (HMAC-SHA-256, hex),
  // never the digits. A run's results are recorded and written without them; an erasure is
  // dropped once no run that was open at it is still open (see erasures.ts).
  {
    version: 3,
    statements: `
  CREATE TABLE erasures (
    id INTEGER PRIMARY KEY,
    erased_at TEXT NOT NULL,
    product TEXT,
    last_task_ref INTEGER NOT NULL,
    hash_key TEXT NOT NULL
  );
  CREATE TABLE erased_numbers (
    erasure_id INTEGER NOT NULL REFERENCES erasures (id),
    hash TEXT NOT NULL,
    PRIMARY KEY (erasure_id, hash)
  ) WITHOUT ROWID;`,
  },
  // Each task's numbers as chunks of up to 4,096, packed as 8-byte big-endian integers (see
  // task-numbers.ts): a run writes them in its claim, which other runs wait for, and a row a
  // number took about half as long as planning the list.
  {
    version: 4,
    statements: `
  CREATE TABLE task_number_chunks (
    task_ref INTEGER NOT NULL REFERENCES tasks (ref),
    chunk INTEGER NOT NULL,
    lowest INTEGER NOT NULL,
    highest INTEGER NOT NULL,
    size INTEGER NOT NULL,
    numbers BLOB NOT NULL,
    PRIMARY KEY (task_ref, chunk)
  );
  INSERT INTO task_number_chunks (task_ref, chunk, lowest, highest, size, numbers)
    SELECT task_ref, chunk, min(identifier), max(identifier), count(*),
      unhex(group_concat(printf('%016x', identifier), '' ORDER BY identifier))
    FROM (SELECT task_ref, identifier, (row_number() OVER (PARTITION BY task_ref ORDER BY identifier) - 1) / 4096 AS chunk
          FROM task_numbers)
    GROUP BY task_ref, chunk;
  DROP TABLE task_numbers;`,
  },
];
