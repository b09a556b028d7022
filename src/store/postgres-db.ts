import { Socket } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg, { type Pool, type PoolClient, type PoolConfig } from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { migrate } from "./postgres-schema.js";
import { postgresTarget, storeFailure, type ConnectBounds, type ConnectionEnv } from "./postgres-connection.js";
import type { ColumnValue } from "./store.js";

/** What a statement binds: arrays go as their literal (numberArray), JSON as its text. */
export type PgParam = ColumnValue | boolean;

/** What a transaction's work is given: statements, and COPY … FROM STDIN of data in COPY's text format. */
export interface TransactionClient {
  query: (text: string, values?: readonly PgParam[]) => Promise<ColumnValue[][]>;
  /** Runs a statement and says how many rows it changed. */
  run: (text: string, values?: readonly PgParam[]) => Promise<number>;
  copyIn: (copyStatement: string, data: Iterable<string>) => Promise<void>;
}

/**
 * Connections a process opens at most: a run records results, heartbeats its lease and
 * updates tasks at once, and pg runs one statement at a time per connection.
 */
const POOL_SIZE = 4;

const INT8 = 20;
const TIMESTAMPTZ = 1184;

/**
 * Values come back as the embedded store's do (see store-rows.ts): `bigint` as a JavaScript
 * number (identifiers have at most 15 digits, counts and references are far below 2^53) and
 * `timestamptz` as an ISO 8601 UTC string with milliseconds, whatever the session's time zone.
 */
const TYPES = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8) return Number;
    if (oid === TIMESTAMPTZ) {
      const parse = pg.types.getTypeParser(TIMESTAMPTZ, "text") as (text: string) => Date;
      return (text: string) => parse(text).toISOString();
    }
    return pg.types.getTypeParser(oid, format ?? "text") as (value: string) => unknown;
  },
};

/**
 * A PostgreSQL database through a small pool of pg connections, with every failure of the
 * database turned into the store's own errors (storeFailure) and every row returned as an
 * array. One statement at a time per connection: a transaction takes a connection of its own.
 */
export class PostgresDb {
  private constructor(
    readonly location: string,
    readonly schemaVersion: number,
    private readonly pool: Pool,
  ) {}

  /**
   * Connects (failing within connect_timeout, 10 s by default, or the time the command has
   * left if that is shorter, when the server cannot be reached or does not answer) and
   * migrates; `bounds.signal` (Ctrl-C, SIGTERM) stops connecting at once, its reason
   * thrown. With sslmode=prefer (the default) or allow, a server without TLS is connected to
   * in plain TCP, as libpq does.
   */
  static async open(storeUrl: string, env: ConnectionEnv, bounds: ConnectBounds = {}): Promise<PostgresDb> {
    bounds.signal?.throwIfAborted();
    const target = postgresTarget(storeUrl, env);
    const connecting = stoppableConnections(bounds.signal);
    const config: PoolConfig = {
      ...target.config,
      // The shorter of connect_timeout and the command's time left; never 0, which pg takes as no limit.
      connectionTimeoutMillis: Math.max(1, Math.min(target.config.connectionTimeoutMillis, bounds.withinMs ?? Infinity)),
      stream: connecting.socket,
    };
    let pool = newPool(config);
    try {
      let client: PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        const fallBack = (target.sslMode === "prefer" || target.sslMode === "allow") && /does not support SSL/.test(String(error));
        if (!fallBack) throw error;
        await pool.end();
        pool = newPool({ ...config, ssl: false });
        client = await pool.connect();
      }
      try {
        return new PostgresDb(target.location, await migrate(client, target.location), pool);
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw storeFailure(error, target.location);
    } finally {
      connecting.done();
    }
  }

  async rows(text: string, values: readonly PgParam[] = []): Promise<ColumnValue[][]> {
    try {
      return (await this.pool.query<ColumnValue[]>({ text, values: [...values], rowMode: "array" })).rows;
    } catch (error) {
      throw storeFailure(error, this.location);
    }
  }

  async row(text: string, values: readonly PgParam[] = []): Promise<ColumnValue[] | undefined> {
    return (await this.rows(text, values))[0];
  }

  /** Runs a statement and says how many rows it changed. */
  async run(text: string, values: readonly PgParam[] = []): Promise<number> {
    try {
      return (await this.pool.query({ text, values: [...values] })).rowCount ?? 0;
    } catch (error) {
      throw storeFailure(error, this.location);
    }
  }

  /**
   * Runs a maintenance statement that may not run inside a transaction (VACUUM) on a
   * connection of its own, and returns the warnings the server sent with it (a VACUUM it was
   * not allowed to do is skipped with one, not refused).
   */
  async maintain(text: string): Promise<string[]> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeFailure(error, this.location);
    }
    const warnings: string[] = [];
    const onNotice = (notice: { severity?: string; message?: string }) => {
      if (notice.severity === "WARNING" && notice.message) warnings.push(notice.message);
    };
    client.on("notice", onNotice);
    let failed = false;
    try {
      await client.query(text);
    } catch (error) {
      failed = true;
      throw storeFailure(error, this.location);
    } finally {
      client.off("notice", onNotice);
      // The connection may be what failed: it is closed rather than handed out again.
      client.release(failed);
    }
    return warnings;
  }

  /**
   * The rows of `text` in batches of `batchRows`, read through a cursor on a connection of
   * its own, held until the last batch is read or the reader stops. The query is planned
   * and run once, so a batch costs the same however far into the rows it is (keyset pages
   * were re-planned each time, and without fresh statistics after a big recording the
   * planner re-sorted everything left for every page).
   */
  async *cursor(text: string, values: readonly PgParam[], batchRows: number): AsyncGenerator<ColumnValue[][]> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeFailure(error, this.location);
    }
    let state: "reading" | "done" | "failed" = "reading";
    try {
      await client.query("BEGIN READ ONLY");
      await client.query({ text: `DECLARE batches NO SCROLL CURSOR FOR ${text}`, values: [...values] });
      for (;;) {
        const { rows } = await client.query<ColumnValue[]>({ text: `FETCH ${batchRows} FROM batches`, rowMode: "array" });
        if (rows.length === 0) break;
        yield rows;
      }
      await client.query("COMMIT");
      state = "done";
    } catch (error) {
      state = "failed";
      throw storeFailure(error, this.location);
    } finally {
      // A reader that stopped early leaves the transaction open: it is rolled back before the connection is reused.
      if (state === "reading") await client.query("ROLLBACK").catch(() => (state = "failed"));
      client.release(state === "failed");
    }
  }

  /** Runs `work` in one transaction on a connection of its own, committed when it returns, rolled back when it throws. */
  transaction<T>(work: (client: TransactionClient) => Promise<T>): Promise<T> {
    return this.#inTransaction(work, "COMMIT");
  }

  /** Runs `work` in one transaction that is rolled back whatever happens: a look at what statements would do, leaving nothing. */
  rolledBack<T>(work: (client: TransactionClient) => Promise<T>): Promise<T> {
    return this.#inTransaction(work, "ROLLBACK");
  }

  async #inTransaction<T>(work: (client: TransactionClient) => Promise<T>, end: "COMMIT" | "ROLLBACK"): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw storeFailure(error, this.location);
    }
    try {
      await client.query("BEGIN");
      const value = await work({
        query: async (text, values = []) => (await client.query<ColumnValue[]>({ text, values: [...values], rowMode: "array" })).rows,
        run: async (text, values = []) => (await client.query({ text, values: [...values] })).rowCount ?? 0,
        copyIn: (copyStatement, data) => pipeline(Readable.from(data), client.query(copyFrom(copyStatement))),
      });
      await client.query(end);
      client.release();
      return value;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      // The connection may be what failed: it is closed rather than handed out again.
      client.release(true);
      throw storeFailure(error, this.location);
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/**
 * A socket factory for pg that, until `done`, closes the sockets it made when `signal`
 * aborts: pg itself would wait out connect_timeout (the URL's may be a minute or more) for
 * a server that accepts and never answers, the socket holding the process open that long.
 */
function stoppableConnections(signal: AbortSignal | undefined): { socket: () => Socket; done: () => void } {
  let opening: Set<Socket> | undefined = new Set();
  const stop = () => {
    const reason: unknown = signal?.reason;
    for (const socket of opening ?? []) socket.destroy(reason instanceof Error ? reason : new Error(String(reason)));
  };
  signal?.addEventListener("abort", stop, { once: true });
  return {
    socket: () => {
      const socket = new Socket();
      opening?.add(socket);
      return socket;
    },
    done: () => {
      signal?.removeEventListener("abort", stop);
      opening = undefined;
    },
  };
}

function newPool(config: PoolConfig): Pool {
  // Tables are named without their schema (see SqlSession): every connection looks in `bulkcheck`. Set by a
  // statement that the pool awaits before handing the new connection out, rather than as a startup option,
  // which poolers such as PgBouncer refuse by default.
  const pool = new pg.Pool({
    ...config,
    max: POOL_SIZE,
    allowExitOnIdle: true,
    types: TYPES,
    // pg-pool awaits the promise onConnect returns before the connection's first query; @types/pg declares it void.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    onConnect: async (client) => {
      await client.query("SET search_path TO bulkcheck");
    },
  });
  // An idle connection the server dropped (a restart) is replaced at the next query, which reports the failure if it lasts.
  pool.on("error", () => undefined);
  return pool;
}

/** `{1,2,3}`: numbers as a PostgreSQL array literal, written directly (pg's own conversion of arrays is slow). */
export function numberArray(numbers: readonly number[]): string {
  return `{${numbers.join(",")}}`;
}
