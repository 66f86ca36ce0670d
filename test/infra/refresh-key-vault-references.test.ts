/**
 * The azd post-provision step that has App Service fetch the apps' Key Vault references again once the secrets
 * are written (infra/scripts/refresh-key-vault-references.sh), run with a stand-in for az whose references
 * resolve only after a given number of refreshes, as when a grant made moments ago is still applying. It asks a
 * few times, briefly, and then warns naming the references still unresolved: it never stops `azd up` (F25-3).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expand, loadCompiledTemplate, MAIN_PARAMETERS } from "./compiled-template.js";

const root = join(import.meta.dirname, "../..");
const script = join(root, "infra/scripts/refresh-key-vault-references.sh");
const bin = mkdtempSync(join(tmpdir(), "key-vault-references-"));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

const APP = "/subscriptions/s/resourceGroups/rg-orders/providers/Microsoft.Web/sites/func-orders";
const PARTNER = "/subscriptions/s/resourceGroups/rg-orders/providers/Microsoft.Web/sites/app-partner-orders";

// `rest --method post` on a site's refresh counts a refresh of it; `rest --method get` answers the status of the
// setting its --query names: Resolved once the site has been refreshed $RESOLVE_AFTER times, else denied.
writeFileSync(
  join(bin, "az"),
  `#!/bin/sh
echo "az $*" >> "$STUB_LOG"
url=""; query=""; method=""
while [ $# -gt 0 ]; do
  case "$1" in --url) url=$2 ;; --query) query=$2 ;; --method) method=$2 ;; esac
  shift
done
site=\${url%%/config/*}
counter="$STUB_DIR/$(echo "$site" | tr '/' '_')"
case "$method" in
  post) n=$(cat "$counter" 2>/dev/null || echo 0); echo $((n + 1)) > "$counter" ;;
  get)
    setting=$(echo "$query" | sed "s#.*'/\\([A-Z_]*\\)'.*#\\1#")
    echo "$site $setting" >> "$STUB_DIR/queried"
    n=$(cat "$counter" 2>/dev/null || echo 0)
    if [ "$n" -ge "\${RESOLVE_AFTER:-1}" ]; then echo Resolved; else echo AccessToKeyVaultDenied; fi ;;
esac`,
);
chmodSync(join(bin, "az"), 0o755);
// Records how long the hook would wait, without waiting.
writeFileSync(join(bin, "sleep"), `#!/bin/sh\necho "$1" >> "$STUB_DIR/sleeps"\n`);
chmodSync(join(bin, "sleep"), 0o755);

/** Runs the hook in a folder of its own; a variable given as undefined is left unset. */
function run(name: string, env: Record<string, string | undefined> = {}) {
  const dir = mkdtempSync(join(bin, `${name}-`));
  const log = join(dir, "calls.log");
  writeFileSync(log, "");
  writeFileSync(join(dir, "queried"), "");
  writeFileSync(join(dir, "sleeps"), "");
  const result = spawnSync("sh", [script], {
    encoding: "utf8",
    env: definedOnly({
      PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
      STUB_LOG: log,
      STUB_DIR: dir,
      AZURE_FUNCTION_APP_ID: APP,
      AZURE_PARTNER_ID: PARTNER,
      REFERENCE_RETRY_SECONDS: "0",
      ...env,
    }),
  });
  const lines = (file: string) => readFileSync(join(dir, file), "utf8").split("\n").filter(Boolean);
  return {
    ...result,
    calls: lines("calls.log"),
    queried: [...new Set(lines("queried"))].sort(),
    waited: lines("sleeps").reduce((sum, seconds) => sum + Number(seconds), 0),
  };
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

const refreshes = (calls: readonly string[], site: string) =>
  calls.filter((call) => call.includes("--method post") && call.includes(`--url ${site}/config/`)).length;

describe("refresh-key-vault-references.sh", () => {
  it("refreshes both apps until every reference resolves, asking again while a role applies", () => {
    const result = run("late", { RESOLVE_AFTER: "3" });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/every Key Vault reference resolved/);
    expect([refreshes(result.calls, APP), refreshes(result.calls, PARTNER)]).toEqual([3, 3]);
    // Relative to the current cloud's Resource Manager endpoint, never a public-cloud host written here.
    for (const call of result.calls.filter((c) => c.startsWith("az rest"))) {
      expect(call).toMatch(
        /--url \/subscriptions\/.*\/config\/configreferences\/appsettings.*api-version=2022-03-01/,
      );
    }
  });

  it("waits for the Function App's key ring alone when there is no simulated partner", () => {
    const result = run("no-partner", { AZURE_PARTNER_ID: "" });
    expect(result.status).toBe(0);
    expect(result.queried).toEqual([`${APP} DATA_PROTECTION_KEYS`]);
    expect(refreshes(result.calls, PARTNER)).toBe(0);
  });

  it("F25-3: warns after its tries, naming each unresolved reference and its status, and lets azd go on", () => {
    const result = run("never", { RESOLVE_AFTER: "99", REFERENCE_ATTEMPTS: "2" });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain("WARNING: still unresolved after 2 tries:");
    expect(result.stderr).toContain("func-orders/DATA_PROTECTION_KEYS (AccessToKeyVaultDenied)");
    expect(result.stderr).toContain("app-partner-orders/PARTNER_ACCESS_KEY (AccessToKeyVaultDenied)");
    expect(result.stderr).toContain("azd hooks run postprovision");
  });

  it("F25-3: by default checks for well under a minute, not the 10 minutes it once waited", () => {
    const result = run("default", {
      RESOLVE_AFTER: "999",
      REFERENCE_RETRY_SECONDS: undefined,
      REFERENCE_ATTEMPTS: undefined,
    });
    expect(result.status).toBe(0);
    expect(result.waited).toBeGreaterThan(0);
    expect(result.waited).toBeLessThan(60);
  });

  const compiled = loadCompiledTemplate();
  it.skipIf("skipReason" in compiled)(
    "waits for exactly the settings the Bicep makes Key Vault references",
    () => {
      const { resources } =
        "template" in compiled ? expand(compiled.template, MAIN_PARAMETERS) : { resources: [] };
      const siteIds: Record<string, string> = { "function-app": APP, partner: PARTNER };
      const references = resources
        .filter((r) => r.type === "Microsoft.Web/sites" && r.module in siteIds)
        .flatMap((r) => {
          const config = (
            r.body.properties as { siteConfig: { appSettings: { name: string; value: unknown }[] } }
          ).siteConfig;
          return config.appSettings
            .filter(({ value }) => String(value).includes("@Microsoft.KeyVault("))
            .map(({ name }) => `${siteIds[r.module]} ${name}`);
        })
        .sort();
      expect(references.length).toBeGreaterThan(0);
      expect(run("compiled").queried).toEqual(references);
    },
  );
});
