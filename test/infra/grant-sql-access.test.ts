/**
 * The azd post-provision hook (infra/scripts/grant-sql-access.sh), run here with stand-ins for az, sqlcmd
 * and curl that record their calls: it refuses to run unless az is signed in as the SQL administrator, and
 * otherwise runs app-database-user.sql with the app's name and client id, inside a temporary firewall rule.
 * The SQL script itself is checked for what makes it safe to run on every provision.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const hook = join(root, "infra/scripts/grant-sql-access.sh");
const userScript = readFileSync(join(root, "infra/scripts/app-database-user.sql"), "utf8");

const ADMIN = "0b5c3f7e-1111-4a2b-9c3d-5e6f7a8b9c0d";
const APP_CLIENT_ID = "7d2e4f60-2222-4b3c-8d4e-6f7a8b9c0d1e";

const bin = mkdtempSync(join(tmpdir(), "grant-sql-access-"));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function stub(name: string, body: string): void {
  const path = join(bin, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

// `account show --subscription S` succeeds only for the subscriptions az is signed in to ($STUB_SUBSCRIPTIONS).
stub(
  "az",
  `echo "az $*" >> "$STUB_LOG"
case "$*" in
  "account show --subscription "*)
    for known in $STUB_SUBSCRIPTIONS; do [ "$4" = "$known" ] && { echo "$known"; exit 0; }; done
    echo "Subscription '$4' not found. Check the spelling and casing and try again." >&2; exit 1 ;;
  "account get-access-token"*) echo "$STUB_TOKEN" ;;
  "sql server ad-admin list"*) echo "$STUB_ADMIN_SID" ;;
esac`,
);
stub(
  "sqlcmd",
  `if [ "$1" = "--help" ]; then echo "  --authentication-method string"; exit 0; fi
echo "sqlcmd $*" >> "$STUB_LOG"`,
);
stub("curl", `echo "curl $*" >> "$STUB_LOG"; echo 203.0.113.7`);

/** An access token as az prints it: only its payload's oid claim matters here. */
const token = (oid: string) =>
  ["e30", Buffer.from(JSON.stringify({ oid, tid: "tenant" })).toString("base64url"), "signature"].join(".");

const SUBSCRIPTION = "3c4d5e6f-5555-4a6b-9c7d-8e9f0a1b2c3d";

function runHook(
  signedInAs: string,
  subscriptions = `${SUBSCRIPTION} 11111111-6666-4b7c-8d9e-0f1a2b3c4d5e`,
): { status: number | null; stderr: string; calls: string[] } {
  const log = join(bin, `calls-${signedInAs}-${subscriptions.length}.log`);
  writeFileSync(log, "");
  const result = spawnSync("sh", [hook], {
    encoding: "utf8",
    env: {
      PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`,
      STUB_LOG: log,
      STUB_TOKEN: token(signedInAs),
      STUB_ADMIN_SID: ADMIN,
      STUB_SUBSCRIPTIONS: subscriptions,
      AZURE_SUBSCRIPTION_ID: SUBSCRIPTION,
      AZURE_RESOURCE_GROUP: "rg-orders",
      AZURE_SQL_SERVER_NAME: "sql-orders",
      AZURE_SQL_SERVER_FQDN: "sql-orders.database.example",
      AZURE_SQL_DATABASE: "orders",
      AZURE_FUNCTION_APP_NAME: "func-orders",
      AZURE_FUNCTION_APP_CLIENT_ID: APP_CLIENT_ID,
    },
  });
  const calls = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { status: result.status, stderr: result.stderr, calls };
}

describe("grant-sql-access.sh", () => {
  it("stops before touching the server when az is signed in as someone other than the SQL administrator", () => {
    const { status, stderr, calls } = runHook("99999999-3333-4c4d-9e5f-7a8b9c0d1e2f");
    expect(status).toBe(1);
    expect(stderr).toContain(`the SQL administrator of sql-orders is '${ADMIN}'`);
    expect(calls.filter((call) => /firewall-rule|^sqlcmd|^curl/.test(call))).toEqual([]);
  });

  it("as the administrator, runs the user script with the app's name and client id inside a temporary firewall rule", () => {
    const { status, stderr, calls } = runHook(ADMIN.toUpperCase());
    expect(stderr).toBe("");
    expect(status).toBe(0);
    const steps = calls.filter((call) => /firewall-rule (create|delete)|^sqlcmd/.test(call));
    expect(steps.map((call) => call.split(" ").slice(0, 5).join(" "))).toEqual([
      "az sql server firewall-rule create",
      "sqlcmd -S tcp:sql-orders.database.example,1433 -d orders",
      "az sql server firewall-rule delete",
    ]);
    expect(steps[1]).toContain(`-v APP_NAME=func-orders -v APP_CLIENT_ID=${APP_CLIENT_ID}`);
    expect(steps[1]).toMatch(
      /--authentication-method ActiveDirectoryDefault .*-i \S*app-database-user\.sql$/,
    );
  });

  it("names azd's subscription on every az call that reaches a resource, whatever az's default is", () => {
    const { status, calls } = runHook(ADMIN);
    expect(status).toBe(0);
    const azCalls = calls.filter((call) => call.startsWith("az "));
    expect(azCalls.length).toBeGreaterThanOrEqual(5);
    expect(azCalls.filter((call) => !call.includes(`--subscription ${SUBSCRIPTION}`))).toEqual([]);
  });

  it("stops before touching the server when az cannot use azd's subscription, naming it", () => {
    const { status, stderr, calls } = runHook(ADMIN, "11111111-6666-4b7c-8d9e-0f1a2b3c4d5e");
    expect(status).toBe(1);
    expect(stderr).toContain(`az cannot use subscription ${SUBSCRIPTION}, the one azd deployed to`);
    expect(calls.filter((call) => /^az sql|^sqlcmd|^curl/.test(call))).toEqual([]);
  });
});

/** What keeps the user script safe for a service principal and for every provision after the first. */
function databaseUserScriptProblems(sql: string): string[] {
  const problems: string[] = [];
  const code = sql.replace(/--.*$/gm, "");
  // A statement starts on a line at the left margin; indented lines and BEGIN ... END blocks continue it.
  const statements: string[] = [];
  for (const line of code.split("\n")) {
    if (line.trim() === "") continue;
    const continues = /^\s/.test(line) || /^(BEGIN|END)\b/i.test(line);
    if (continues && statements.length > 0) statements[statements.length - 1] += ` ${line.trim()}`;
    else statements.push(line.trim());
  }
  if (/FROM EXTERNAL PROVIDER/i.test(code))
    problems.push("FROM EXTERNAL PROVIDER looks the identity up in the directory");
  if (!/N' WITH SID = ' \+ CONVERT\(nvarchar\(34\), @sid, 1\) \+ N', TYPE = E'/.test(code))
    problems.push("the user is not created from the client id (WITH SID = <client id as binary>, TYPE = E)");
  if (!/CONVERT\(varbinary\(16\), CONVERT\(uniqueidentifier, N'\$\(APP_CLIENT_ID\)'\)\)/.test(code))
    problems.push("the SID is not the client id as binary");
  for (const statement of statements) {
    if (/DROP USER/i.test(statement) && !/^IF EXISTS \(.* AND sid <> @sid\)/i.test(statement))
      problems.push(`drops the user unconditionally: ${statement}`);
    if (
      /CREATE USER/i.test(statement) &&
      !/^IF NOT EXISTS \(SELECT 1 FROM sys\.database_principals WHERE name = N'\$\(APP_NAME\)'\)/i.test(
        statement,
      )
    )
      problems.push(`creates the user even when it exists: ${statement}`);
    const role = /ALTER ROLE (\w+) ADD MEMBER/i.exec(statement)?.[1];
    if (
      role &&
      !new RegExp(`^IF IS_ROLEMEMBER\\(N'${role}', N'\\$\\(APP_NAME\\)'\\) = 0`, "i").test(statement)
    )
      problems.push(`adds ${role} without checking membership: ${statement}`);
  }
  for (const role of ["db_datareader", "db_datawriter", "db_ddladmin"]) {
    if (!new RegExp(`ALTER ROLE ${role} ADD MEMBER \\[\\$\\(APP_NAME\\)\\]`).test(code))
      problems.push(`no ${role}`);
  }
  return problems;
}

describe("app-database-user.sql", () => {
  it("creates the user from the client id, without a directory lookup, and only when missing; adds missing roles", () => {
    expect(databaseUserScriptProblems(userScript)).toEqual([]);
  });

  it("the check fails on the old script, which dropped and recreated the user FROM EXTERNAL PROVIDER", () => {
    const old = `IF EXISTS (SELECT 1 FROM sys.database_principals WHERE name = N'$(APP_NAME)')
  DROP USER [$(APP_NAME)];
GO
CREATE USER [$(APP_NAME)] FROM EXTERNAL PROVIDER WITH OBJECT_ID = '$(APP_PRINCIPAL_ID)';
ALTER ROLE db_datareader ADD MEMBER [$(APP_NAME)];
ALTER ROLE db_datawriter ADD MEMBER [$(APP_NAME)];
ALTER ROLE db_ddladmin ADD MEMBER [$(APP_NAME)];
GO`;
    const problems = databaseUserScriptProblems(old);
    expect(problems).toEqual([
      "FROM EXTERNAL PROVIDER looks the identity up in the directory",
      "the user is not created from the client id (WITH SID = <client id as binary>, TYPE = E)",
      "the SID is not the client id as binary",
      expect.stringMatching(/^drops the user unconditionally/),
      expect.stringMatching(/^creates the user even when it exists/),
      expect.stringMatching(/^adds db_datareader without checking membership/),
      expect.stringMatching(/^adds db_datawriter without checking membership/),
      expect.stringMatching(/^adds db_ddladmin without checking membership/),
    ]);
  });
});
