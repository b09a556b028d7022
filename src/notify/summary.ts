import { count } from "../format-count.js";
import type { ChangesSummary } from "../ledger/changes.js";
import { formatUsd } from "../tasks/cost.js";

/** What changed in a run's list since its previous check (see docs/notifications.md#what-changed). */
export interface ChangeCounts {
  /** Numbers whose result changed, of those `compared` (checked now, with an earlier result). */
  changed: number;
  compared: number;
  /** Numbers of the list not in its previous check, and numbers of that check no longer in the list; null when no previous check is known. */
  appeared: number | null;
  left: number | null;
  /** The run that was the previous check of the whole list. */
  since_run: string | null;
}

/** The counts of a run's changes, as the summary and submit's --json run object give them. */
export function changeCounts(summary: ChangesSummary): ChangeCounts {
  return {
    changed: summary.numbers,
    compared: summary.compared,
    appeared: summary.list?.appeared ?? null,
    left: summary.list?.left ?? null,
    since_run: summary.list?.since.run ?? null,
  };
}

/**
 * How a command ended, as `--on-done` reads it on stdin and `--notify` posts it: one JSON
 * document, the same for both. The outer shape (`type`, `timestamp`, `data`) is the one the
 * Standard Webhooks specification recommends; `version` changes only when a field changes
 * meaning or goes away (new fields may be added within a version).
 */
export interface EndSummary {
  type: typeof SUMMARY_TYPE;
  version: typeof SUMMARY_VERSION;
  /** When the command ended (ISO 8601, UTC). */
  timestamp: string;
  data: {
    command: string;
    exit_code: number;
    /** "ok", "changed" (--exit-on-change, exit 11), or the failure's code as `--json` errors name it ("task_failed", "pending", …). */
    status: string;
    error: { code: string; message: string; hint: string | null } | null;
    host: string;
    profile: string;
    started_at: string;
    /** The run of a submit or retry-failed, once it exists. */
    run: string | null;
    /** The tasks the command submitted, waited for or downloaded (those known when it ended). */
    tasks: string[];
    /** The -o file (absolute), "-" for stdout, or null when the command wrote no results. */
    output: string | null;
    /** Null when nothing was compared (no ledger, no --wait, or a command that does not check a list). */
    changes: ChangeCounts | null;
    /** What the service charged for the command's tasks (checked numbers at the price), when all of them finished. */
    charged_micros: number | null;
    charged_usd: number | null;
  };
}

export const SUMMARY_TYPE = "bulkcheck.command.ended";
export const SUMMARY_VERSION = 1;

/**
 * The summary as environment variables of the `--on-done` command, for a shell line that
 * needs no JSON parser. A value that is not known is the empty string.
 */
export function hookEnvironment({ data }: EndSummary): Record<string, string> {
  const known = (value: number | null | undefined) => (value === null || value === undefined ? "" : String(value));
  return {
    BULKCHECK_EXIT: String(data.exit_code),
    BULKCHECK_STATUS: data.status,
    BULKCHECK_COMMAND: data.command,
    BULKCHECK_RUN: data.run ?? "",
    BULKCHECK_TASKS: data.tasks.join(" "),
    BULKCHECK_OUTPUT: data.output ?? "",
    BULKCHECK_CHANGES: known(data.changes?.changed),
    BULKCHECK_APPEARED: known(data.changes?.appeared),
    BULKCHECK_LEFT: known(data.changes?.left),
    BULKCHECK_CHARGED_USD: known(data.charged_usd),
    BULKCHECK_ERROR: data.error?.message ?? "",
  };
}

/**
 * The summary as one line for people, with every value it quotes (the service's error text, a
 * path, the host's and the profile's names) written by `quoted` for where the line goes (see
 * chatText); bulkcheck's own words are plain text.
 */
function summaryText({ data }: EndSummary, quoted: (text: string) => string): string {
  const where = `on ${quoted(data.host)}${data.profile === "default" ? "" : ` (profile ${quoted(data.profile)})`}`;
  if (data.error) {
    return `bulkcheck ${data.command} failed ${where}, exit ${data.exit_code} (${quoted(data.error.code)}): ${quoted(data.error.message)}`;
  }
  const facts = [
    data.run ? `run ${quoted(data.run)}` : undefined,
    data.tasks.length > 0 ? `${count(data.tasks.length)} task(s)` : undefined,
    data.output && data.output !== "-" ? `output ${quoted(data.output)}` : undefined,
    data.changes ? changesText(data.changes) : undefined,
    data.charged_micros === null ? undefined : `charged ${formatUsd(data.charged_micros)}`,
  ].filter((fact) => fact !== undefined);
  const status = data.status === "changed" ? "succeeded, with changes," : "succeeded";
  return `bulkcheck ${data.command} ${status} ${where}${facts.length > 0 ? `: ${facts.join("; ")}` : ""}.`;
}

/**
 * The summary as the text of a chat message (`--notify-format slack`, which Slack, Teams and
 * Mattermost show): every value it quotes escaped as Slack's mrkdwn asks (`&`, `<` and `>` as
 * entities, which Teams' and Mattermost's Markdown read as the characters), so a hostile
 * service's error text posts no `<!channel>`, mention or disguised `<url|link>`; and a word
 * joiner after the `@` of `@channel`, `@here`, `@all` and `@everyone`, which Mattermost would
 * notify the whole channel of.
 */
export function chatText(summary: EndSummary): string {
  return summaryText(summary, chatEscaped);
}

const MRKDWN_ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

function chatEscaped(text: string): string {
  return text.replace(/[&<>]/g, (char) => MRKDWN_ENTITIES[char]!).replace(/@(channel|here|all|everyone)\b/gi, "@\u2060$1");
}

function changesText(changes: ChangeCounts): string {
  const changed = `${count(changes.changed)} of ${count(changes.compared)} numbers changed`;
  if (changes.appeared === null || changes.left === null) return changed;
  return `${changed}, ${count(changes.appeared)} appeared, ${count(changes.left)} left`;
}
