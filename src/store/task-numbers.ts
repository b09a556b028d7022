import { questionMarks, type SqlParam, type SqlSession } from "./sql-session.js";

/**
 * A task's numbers are kept as chunks of up to CHUNK_SIZE numbers, each chunk one row whose
 * `numbers` holds them in the order they were given as 8-byte big-endian integers (as
 * PostgreSQL's int8send writes a bigint), with the lowest and highest beside it. A run claims
 * the numbers it uploads by writing them in its claim's transaction, which every other run of
 * the product waits for: a row a number (and an index entry) took about half as long as
 * planning the list, sorted chunks a quarter (the sort was half of it); as given, only their
 * packing is left. Readers take a task's numbers as a set, chunk by chunk; `ledger forget`
 * looks into each chunk whose range holds a forgotten number.
 */
const CHUNK_SIZE = 4096;
const TWO_TO_32 = 2 ** 32;
const CHUNK_COLUMNS = ["task_ref", "chunk", "lowest", "highest", "size", "numbers"];
/** Chunks inserted per statement. */
const CHUNKS_PER_STATEMENT = 100;
/** Chunks read per query: about 400,000 numbers. */
const CHUNKS_PER_READ = 100;

/**
 * Writes a task's numbers (each once: a part's numbers are), all in one transaction, unless
 * the task has numbers already: a run carried on writes them again, and what the store kept
 * (less any number forgotten since) stays as it is.
 */
export async function addTaskNumbers(session: SqlSession, taskRef: number, identifiers: ArrayLike<number>): Promise<void> {
  if (identifiers.length === 0) return;
  const chunks: SqlParam[] = [];
  for (let at = 0, chunk = 0; at < identifiers.length; at += CHUNK_SIZE, chunk++) {
    const numbers = Array.prototype.slice.call(identifiers, at, at + CHUNK_SIZE) as number[];
    const { lowest, highest } = range(numbers);
    chunks.push(taskRef, chunk, lowest, highest, numbers.length, packed(numbers)); // as CHUNK_COLUMNS
  }
  await session.transaction(async (inside) => {
    if (await inside.row("SELECT 1 FROM task_number_chunks WHERE task_ref = ? LIMIT 1", [taskRef])) return;
    await insertChunks(inside, chunks);
  });
}

/** The numbers of a task, a few chunks at a time. */
export async function* taskNumbers(session: SqlSession, taskRef: number): AsyncIterable<readonly number[]> {
  for (let after = -1; ;) {
    const rows = await session.rows(
      "SELECT chunk, numbers FROM task_number_chunks WHERE task_ref = ? AND chunk > ? ORDER BY chunk LIMIT ?",
      [taskRef, after, CHUNKS_PER_READ],
    );
    if (rows.length === 0) return;
    after = Number(rows.at(-1)![0]);
    yield rows.flatMap(([, numbers]) => unpacked(numbers as Uint8Array));
  }
}

/** Deletes the numbers of the tasks `where` selects (over `task_ref`); returns how many numbers they were. */
export async function deleteTaskNumbers(session: SqlSession, where: string, params: readonly SqlParam[]): Promise<number> {
  const [numbers] = (await session.row(`SELECT coalesce(sum(size), 0) FROM task_number_chunks WHERE ${where}`, params))!;
  await session.run(`DELETE FROM task_number_chunks WHERE ${where}`, params);
  return Number(numbers);
}

/**
 * Takes `identifiers` out of every task's numbers (of `product`'s tasks only, when given):
 * the chunks whose range holds one of them are written again without them, or deleted when
 * nothing is left. Returns how many numbers were taken out.
 */
export async function eraseTaskNumbers(session: SqlSession, identifiers: readonly number[], product: string | undefined): Promise<number> {
  const erased = distinctSorted(identifiers);
  if (erased.length === 0) return 0;
  const ofProduct = product === undefined ? "" : " AND task_ref IN (SELECT ref FROM tasks WHERE product = ?)";
  const ranges = await session.rows(
    `SELECT task_ref, chunk, lowest, highest FROM task_number_chunks WHERE highest >= ? AND lowest <= ?${ofProduct}`,
    [erased[0]!, erased.at(-1)!, ...(product === undefined ? [] : [product])],
  );
  const set = new Set(erased);
  let taken = 0;
  for (const [taskRef, chunk, lowest, highest] of ranges) {
    if (!anyWithin(erased, Number(lowest), Number(highest))) continue;
    const key = [Number(taskRef), Number(chunk)];
    const [bytes] = (await session.row("SELECT numbers FROM task_number_chunks WHERE task_ref = ? AND chunk = ?", key))!;
    const numbers = unpacked(bytes as Uint8Array);
    const kept = numbers.filter((number) => !set.has(number));
    if (kept.length === numbers.length) continue;
    taken += numbers.length - kept.length;
    if (kept.length === 0) await session.run("DELETE FROM task_number_chunks WHERE task_ref = ? AND chunk = ?", key);
    else {
      const { lowest, highest } = range(kept);
      await session.run("UPDATE task_number_chunks SET lowest = ?, highest = ?, size = ?, numbers = ? WHERE task_ref = ? AND chunk = ?", [
        lowest,
        highest,
        kept.length,
        packed(kept),
        ...key,
      ]);
    }
  }
  return taken;
}

async function insertChunks(session: SqlSession, values: readonly SqlParam[]): Promise<void> {
  const perStatement = CHUNKS_PER_STATEMENT * CHUNK_COLUMNS.length;
  for (let at = 0; at < values.length; at += perStatement) {
    const some = values.slice(at, at + perStatement);
    const rows = Array.from({ length: some.length / CHUNK_COLUMNS.length }, () => `(${questionMarks(CHUNK_COLUMNS.length)})`).join(", ");
    await session.run(`INSERT INTO task_number_chunks (${CHUNK_COLUMNS.join(", ")}) VALUES ${rows}`, some);
  }
}

/** Numbers (whole, below 2^53) as 8-byte big-endian integers. */
function packed(numbers: ArrayLike<number>): Buffer {
  const bytes = Buffer.allocUnsafe(numbers.length * 8);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < numbers.length; at++) {
    const number = numbers[at]!;
    view.setUint32(at * 8, Math.floor(number / TWO_TO_32));
    view.setUint32(at * 8 + 4, number >>> 0);
  }
  return bytes;
}

function unpacked(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const numbers = new Array<number>(bytes.byteLength / 8);
  for (let at = 0; at < numbers.length; at++) numbers[at] = view.getUint32(at * 8) * TWO_TO_32 + view.getUint32(at * 8 + 4);
  return numbers;
}

/** The lowest and highest of some numbers (at least one). */
function range(numbers: readonly number[]): { lowest: number; highest: number } {
  let lowest = numbers[0]!;
  let highest = lowest;
  for (const number of numbers) {
    if (number < lowest) lowest = number;
    else if (number > highest) highest = number;
  }
  return { lowest, highest };
}

/** The numbers once each, ascending. */
function distinctSorted(identifiers: ArrayLike<number>): Float64Array {
  const sorted = new Float64Array(identifiers).sort();
  let kept = 0;
  for (let at = 0; at < sorted.length; at++) if (at === 0 || sorted[at] !== sorted[at - 1]) sorted[kept++] = sorted[at]!;
  return sorted.subarray(0, kept);
}

/** Whether the ascending `numbers` has one from `lowest` to `highest`. */
function anyWithin(numbers: Float64Array, lowest: number, highest: number): boolean {
  let low = 0;
  let high = numbers.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (numbers[middle]! < lowest) low = middle + 1;
    else high = middle;
  }
  return low < numbers.length && numbers[low]! <= highest;
}
