import type { Migration } from "./migration.js";

/**
 * The shared store's schema, as numbered migrations in a schema of its own (`bulkcheck`, so
 * its tables live beside a team's others without clashing): `bulkcheck.schema_version` has a
 * row per migration run. The tables, keys and indexes are the embedded store's (sqlite.ts) in
 * PostgreSQL's types: times are `timestamptz`, JSON is `json` (kept as written), numbers and
 * task references are `bigint`. The service's `created_at` stays the text it sent. A test
 * compares the two.
 *
 * `results.task_ref` and `task_number_chunks.task_ref` have no foreign key: PostgreSQL checks one
 * with a trigger per inserted row, which made recording a result ~3× slower (100,000 rows:
 * 5.6 s with it, 1.8 s without, here); the store writes a task's results only under a task
 * reference it has itself. The embedded store has no `meta` table here (it was never used).
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    statements: `
  CREATE TABLE bulkcheck.scopes (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    base_url text NOT NULL,
    profile text NOT NULL,
    UNIQUE (base_url, profile)
  );
  CREATE TABLE bulkcheck.runs (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    scope_id integer NOT NULL REFERENCES bulkcheck.scopes (id),
    identity text NOT NULL,
    kind text NOT NULL,
    state text NOT NULL,
    started_at timestamptz NOT NULL,
    finished_at timestamptz,
    product text NOT NULL,
    country text,
    source json NOT NULL,
    settings json NOT NULL,
    prepared json,
    plan json,
    output json,
    host text,
    os_user text,
    lease_host text,
    lease_pid integer,
    lease_nonce text,
    heartbeat_at timestamptz,
    note text
  );
  CREATE UNIQUE INDEX runs_open ON bulkcheck.runs (scope_id, identity) WHERE state = 'open';
  CREATE INDEX runs_started ON bulkcheck.runs (started_at, seq);
  CREATE TABLE bulkcheck.tasks (
    ref bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope_id integer NOT NULL REFERENCES bulkcheck.scopes (id),
    run_id text REFERENCES bulkcheck.runs (id),
    part integer,
    parts integer,
    idempotency_key text,
    task_id text,
    product text NOT NULL,
    country text,
    count integer,
    sha256 text,
    submitted_at timestamptz,
    upload_started_at timestamptz,
    created_at text,
    status text,
    total integer,
    success_cnt integer,
    failure_cnt integer,
    checked_at timestamptz,
    retry_of text,
    replayed boolean,
    columns json,
    recorded_at timestamptz,
    staged_file text,
    staged_bytes bigint,
    staged_sha256 text
  );
  CREATE UNIQUE INDEX tasks_key ON bulkcheck.tasks (scope_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX tasks_task_id ON bulkcheck.tasks (task_id);
  CREATE INDEX tasks_run ON bulkcheck.tasks (run_id);
  CREATE INDEX tasks_checked ON bulkcheck.tasks (scope_id, product, checked_at);
  CREATE TABLE bulkcheck.results (
    task_ref bigint NOT NULL,
    identifier bigint NOT NULL,
    activated text,
    carrier text,
    underlying_carrier text,
    number_type text,
    country_code text,
    region text,
    city text,
    extra json,
    PRIMARY KEY (task_ref, identifier)
  );
  CREATE INDEX results_identifier ON bulkcheck.results (identifier);`,
  },
  // As the embedded store's migration 2: each task's numbers, written before its upload.
  {
    version: 2,
    statements: `
  CREATE TABLE bulkcheck.task_numbers (
    task_ref bigint NOT NULL,
    identifier bigint NOT NULL,
    PRIMARY KEY (task_ref, identifier)
  );
  CREATE INDEX task_numbers_identifier ON bulkcheck.task_numbers (identifier);`,
  },
  // As the embedded store's migration 3: what `ledger forget` erased while runs were open, hashed.
  {
    version: 3,
    statements: `
  CREATE TABLE bulkcheck.erasures (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    erased_at timestamptz NOT NULL,
    product text,
    last_task_ref bigint NOT NULL,
    hash_key text NOT NULL
  );
  CREATE TABLE bulkcheck.erased_numbers (
    erasure_id bigint NOT NULL REFERENCES bulkcheck.erasures (id),
    hash text NOT NULL,
    PRIMARY KEY (erasure_id, hash)
  );`,
  },
  // As the embedded store's migration 4: each task's numbers as chunks of up to 4,096, packed.
  {
    version: 4,
    statements: `
  CREATE TABLE bulkcheck.task_number_chunks (
    task_ref bigint NOT NULL,
    chunk integer NOT NULL,
    lowest bigint NOT NULL,
    highest bigint NOT NULL,
    size integer NOT NULL,
    numbers bytea NOT NULL,
    PRIMARY KEY (task_ref, chunk)
  );
  -- Kept as written, not compressed: a claim writes it while other runs wait.
  ALTER TABLE bulkcheck.task_number_chunks ALTER COLUMN numbers SET STORAGE EXTERNAL;
  INSERT INTO bulkcheck.task_number_chunks (task_ref, chunk, lowest, highest, size, numbers)
    SELECT task_ref, chunk, min(identifier), max(identifier), count(*), string_agg(int8send(identifier), ''::bytea ORDER BY identifier)
    FROM (SELECT task_ref, identifier, (row_number() OVER (PARTITION BY task_ref ORDER BY identifier) - 1) / 4096 AS chunk
          FROM bulkcheck.task_numbers) numbered
    GROUP BY task_ref, chunk;
  DROP TABLE bulkcheck.task_numbers;`,
  },
];
