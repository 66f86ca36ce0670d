/**
 * The azd post-provision step that writes the simulated partner's access key into the Key Vault
 * (infra/scripts/create-partner-access-key.sh), run with a stand-in for az that records its calls and keeps the
 * secret it is given: it writes a key once, from a file, over the placeholder the Bicep created, and keeps it
 * after. The partner's grant on that one secret is the Bicep's now (./identity.test.ts), so it grants nothing.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadPartnerSettings } from "../../partner/settings.js";

const root = join(import.meta.dirname, "../..");
const script = join(root, "infra/scripts/create-partner-access-key.sh");
const bin = mkdtempSync(join(tmpdir(), "partner-access-key-"));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

// Lists the secret as `present:<content type>` when $STUB_SECRET exists (`placeholder` while it holds
// PLACEHOLDER); `secret set --file F` copies F there. LIST_FAILS makes the first listings fail, as before the
// deployer's role applies.
writeFileSync(
  join(bin, "az"),
  `#!/bin/sh
echo "az $*" >> "$STUB_LOG"
case "$*" in
  "keyvault secret list"*)
    n=$(cat "$STUB_COUNT" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$STUB_COUNT"
    if [ "$n" -le "\${LIST_FAILS:-0}" ]; then echo "Forbidden" >&2; exit 1; fi
    if [ -f "$STUB_SECRET" ]; then
      if [ "$(cat "$STUB_SECRET")" = PLACEHOLDER ]; then echo present:placeholder; else echo present:; fi
    fi ;;
  "keyvault secret set"*)
    while [ $# -gt 0 ]; do if [ "$1" = "--file" ]; then cp "$2" "$STUB_SECRET"; fi; shift; done ;;
esac`,
);
chmodSync(join(bin, "az"), 0o755);
// Records how long the hook would wait, without waiting.
writeFileSync(join(bin, "sleep"), `#!/bin/sh\necho "$1" >> "\${STUB_SLEEPS:-/dev/null}"\n`);
chmodSync(join(bin, "sleep"), 0o755);

/** Runs the hook in a folder of its own; a variable given as undefined is left unset. */
function run(name: string, env: Record<string, string | undefined> = {}) {
  const dir = mkdtempSync(join(bin, `${name}-`));
  const paths = {
    log: join(dir, "calls.log"),
    secret: join(dir, "secret"),
    count: join(dir, "count"),
    sleeps: join(dir, "sleeps"),
  };
  writeFileSync(paths.log, "");
  const exec = () =>
    spawnSync("sh", [script], {
      encoding: "utf8",
      env: definedOnly({
        PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
        STUB_SLEEPS: paths.sleeps,
        STUB_LOG: paths.log,
        STUB_SECRET: paths.secret,
        STUB_COUNT: paths.count,
        AZURE_PARTNER_NAME: "app-partner-orders",
        AZURE_KEY_VAULT_NAME: "kv-orders",
        AZURE_PARTNER_ACCESS_SECRET_NAME: "partner-access-key",
        KEY_VAULT_RETRY_SECONDS: "0",
        ...env,
      }),
    });
  const lines = (path: string) =>
    existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
  return { exec, paths, calls: () => lines(paths.log), sleeps: () => lines(paths.sleeps).map(Number) };
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

describe("create-partner-access-key.sh", () => {
  it("writes one random key from a file that the partner accepts, and keeps it on every later run", () => {
    const hook = run("fresh");
    const first = hook.exec();
    expect(first.status).toBe(0);
    const key = readFileSync(hook.paths.secret, "utf8");
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const settings = loadPartnerSettings({
      PARTNER_ACCESS_KEY: key,
      PARTNER_LEDGER_FILE: "/tmp/ledger.sqlite",
    });
    expect(settings.accessKey).toBe(key);
    // Never on a command line, where other users' process listings would show it.
    expect(hook.calls().join("\n")).not.toContain(key);
    const second = hook.exec();
    expect(second.status).toBe(0);
    expect(second.stdout).toMatch(/already holds partner-access-key; kept/);
    expect(readFileSync(hook.paths.secret, "utf8")).toBe(key);
    expect(hook.calls().filter((call) => call.startsWith("az keyvault secret set"))).toHaveLength(1);
    expect(run("other").exec().status).toBe(0);
  });

  it("F25-3: writes the key over the placeholder the Bicep created, and grants nothing itself", () => {
    const hook = run("placeholder");
    writeFileSync(hook.paths.secret, "PLACEHOLDER");
    expect(hook.exec().status).toBe(0);
    expect(readFileSync(hook.paths.secret, "utf8")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hook.calls().filter((call) => call.startsWith("az role"))).toEqual([]);
  });

  it("does nothing when the deployment calls a partner of the user's", () => {
    const hook = run("real-partner", { AZURE_PARTNER_NAME: "" });
    const result = hook.exec();
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/a partner of your own \(PARTNER_URL\); nothing to do/);
    expect(hook.calls()).toEqual([]);
  });

  it("waits for the deployer's role to apply, and gives up saying why", () => {
    const late = run("late", { LIST_FAILS: "2" });
    expect(late.exec().status).toBe(0);
    expect(existsSync(late.paths.secret)).toBe(true);
    const never = run("never", { LIST_FAILS: "99", KEY_VAULT_ATTEMPTS: "3" });
    const result = never.exec();
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/cannot list the secrets of kv-orders/);
    expect(existsSync(never.paths.secret)).toBe(false);
  });

  it("waits 10 minutes by default for the role, as long as a Key Vault role assignment can take", () => {
    const hook = run("ten-minutes", { LIST_FAILS: "999", KEY_VAULT_RETRY_SECONDS: undefined });
    const result = hook.exec();
    expect(result.status).toBe(1);
    expect(hook.sleeps().reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(600);
    expect(result.stderr).toMatch(/after 61 tries .*about 10 minutes.*azd hooks run postprovision/s);
  });

  it("refuses to run outside azd, naming the variable", () => {
    const result = run("outside", { AZURE_KEY_VAULT_NAME: "" }).exec();
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/AZURE_KEY_VAULT_NAME/);
  });
});
