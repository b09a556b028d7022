import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isSettingKey, SETTINGS, type SettingKey } from "../../src/config/settings.js";
import { runCli, tempDir } from "../helpers/cli.js";

/** What marks a secret in the values below: no view may show it. */
const SECRET = "S3CR3T";

/**
 * Every value with a secret each setting may hold, in the places that setting keeps one (the
 * key itself, a password or token in a URL, a chat webhook's path); none for a setting whose
 * parser takes numbers or words only. A setting added to src/config/settings.ts without an
 * entry here fails the walk below until someone says which secrets it may hold.
 */
const SECRET_VALUES: Partial<Record<SettingKey, readonly string[]>> = {
  "api-key": [`sk_live_${SECRET}${SECRET}wxyz`],
  "base-url": [`https://ana:${SECRET}@api.example.com/?token=${SECRET}`],
  store: [`postgres://ana:${SECRET}@db.example.com/bulkcheck`, `postgres://ana@db.example.com/bulkcheck?sslpassword=${SECRET}`],
  "on-done": [
    `curl -fsS -d @- https://hooks.slack.com/services/T0/B0/${SECRET}`,
    `notify-team --url 'https://ana:${SECRET}@hooks.example.com/bulkcheck?token=${SECRET}'`,
  ],
  notify: [
    `https://ana:${SECRET}@hooks.example.com/bulkcheck?token=${SECRET}`,
    `https://hooks.slack.com/services/T0/B0/${SECRET}`,
    `https://example.webhook.office.com/webhookb2/${SECRET}`,
  ],
  "webhook-secret": [`whsec_abcd${SECRET}${SECRET}${SECRET}${SECRET}wxyz`],
};

const ALL_SECRET_VALUES = Object.values(SECRET_VALUES).flat();

/** Settings that hold no secret: their parsers take numbers or words only. */
const HOLDS_NONE = (key: string) =>
  key.startsWith("price.") ||
  [
    "min-task-size",
    "max-task-size",
    "max-file-bytes",
    "max-in-flight",
    "max-age",
    "ledger",
    "ledger-retention",
    "pad",
    "notify-format",
  ].includes(key);

/** A config directory whose default profile holds `value` for `key`, written as a hand-edited file (or an older bulkcheck) would. */
function configHolding(key: SettingKey, value: string | number): Record<string, string> {
  const dir = tempDir();
  writeFileSync(join(dir, "config.json"), JSON.stringify({ profiles: { default: { [key]: value } } }), { mode: 0o600 });
  return { BULKCHECK_CONFIG_DIR: dir };
}

/** Every view of the setting `key`: config get and config list, for a person, in JSON and through --query, and config set's note. */
async function views(key: SettingKey, text: string, stored: string | number): Promise<string[]> {
  const env = configHolding(key, stored);
  const query = `settings."${key}"`;
  const runs = [
    runCli(["config", "get", key], { env }),
    runCli(["--json", "config", "get", key], { env }),
    runCli(["--json", "--query", "value", "config", "get", key], { env }),
    runCli(["config", "list"], { env }),
    runCli(["--json", "config", "list"], { env }),
    runCli(["--json", "--query", query, "config", "list"], { env }),
    runCli(["config", "set", key, "-"], { env: { BULKCHECK_CONFIG_DIR: tempDir() }, stdin: `${text}\n` }),
    runCli(["--json", "config", "set", key, "-"], { env: { BULKCHECK_CONFIG_DIR: tempDir() }, stdin: `${text}\n` }),
  ];
  const variable = SETTINGS[key].variable;
  if (variable !== undefined) {
    // The variable wins over the profile's value, and both are named.
    runs.push(runCli(["config", "list"], { env: { ...env, [variable]: text } }));
    runs.push(runCli(["--json", "config", "list"], { env: { ...env, [variable]: text } }));
    runs.push(runCli(["--json", "--query", query, "config", "list"], { env: { ...env, [variable]: text } }));
  }
  const outs = await Promise.all(runs);
  expect(outs[0]!.code, `config get ${key}`).toBe(0);
  return outs.map((out) => out.stdout + out.stderr);
}

describe("how a setting that holds a secret is shown (issue 35, point 3)", () => {
  it("walks every setting of the settings table through every view with a secret value, and no view shows the secret", async () => {
    const walked: string[] = [];
    for (const key of Object.keys(SETTINGS).filter(isSettingKey)) {
      const spec = SETTINGS[key];
      if (HOLDS_NONE(key)) {
        // A setting that holds no secret cannot be given one: its parser refuses every value above.
        for (const value of ALL_SECRET_VALUES) expect(() => spec.parse(value), `${key} took ${value}`).toThrow();
        continue;
      }
      const values = SECRET_VALUES[key];
      expect(values, `${key} is new: give it the values with a secret it may hold in SECRET_VALUES`).toBeDefined();
      for (const value of values!) {
        for (const shown of await views(key, value, spec.parse(value))) expect(shown, `${key} = ${value}`).not.toContain(SECRET);
        walked.push(key);
      }
    }
    expect(new Set(walked)).toEqual(new Set(Object.keys(SECRET_VALUES)));
  });

  it("shows a setting's value the same way in every view: the notify URL as its origin, in --json too", async () => {
    const env = configHolding("notify", `https://ana:${SECRET}@hooks.example.com/services/${SECRET}?token=${SECRET}`);
    const [human, json, listed] = await Promise.all([
      runCli(["config", "get", "notify"], { env }),
      runCli(["--json", "config", "get", "notify"], { env }),
      runCli(["--json", "--query", "settings.notify.value", "config", "list"], { env }),
    ]);
    expect(human.stdout).toBe("https://hooks.example.com/…\n");
    expect(JSON.parse(json.stdout)).toEqual({ key: "notify", value: "https://hooks.example.com/…" });
    expect(listed.stdout).toBe("https://hooks.example.com/…\n");
  });

  it("keeps what holds no secret whole: a number stays a number in --json, an on-done command keeps its words", async () => {
    const age = configHolding("max-age", 604800);
    expect((await runCli(["--json", "config", "get", "max-age"], { env: age })).stdout).toBe('{"key":"max-age","value":604800}\n');
    expect((await runCli(["config", "get", "max-age"], { env: age })).stdout).toBe("7d\n");
    const command = configHolding("on-done", "sh -c 'mail -s done ops@example.com' https://hooks.example.com/x");
    expect((await runCli(["config", "get", "on-done"], { env: command })).stdout).toBe(
      "sh -c 'mail -s done ops@example.com' https://hooks.example.com/…\n",
    );
  });
});
