/**
 * `npm run check:sql`: every T-SQL text the SQL adapter sends, exported from the TypeScript source, is
 * parsed by ScriptDom (TSql160Parser) and checked against the schema the migrations build, in a DacFx model,
 * by the .NET tool in tools/sql-check. Fails on any error.
 *
 * The deployment's own T-SQL (infra/scripts/*.sql, run by sqlcmd) is parsed too, batch by batch with its
 * sqlcmd variables filled in; it works on the server's catalog, not on our tables, so it is parsed only.
 *
 *   tsx tools/check-sql.ts [<statements.json>]   (default: export them from src/adapters/sql)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dotnetOrExit, ROOT_DIR, run, TOOLS_DIR } from "./dotnet.js";
import { exportSqlStatements } from "./export-sql-statements.js";

const HOOK_SCRIPTS = ["infra/scripts/app-database-user.sql"];
const SQLCMD_SAMPLE_VALUES: Readonly<Record<string, string>> = {
  APP_NAME: "func-example",
  APP_CLIENT_ID: "00000000-0000-0000-0000-000000000000",
};

/** A sqlcmd script's batches (split at GO lines), with `$(NAME)` replaced by sample values. */
function sqlcmdBatches(path: string) {
  const text = readFileSync(join(ROOT_DIR, path), "utf8").replace(/\$\((\w+)\)/g, (_, name: string) => {
    const value = SQLCMD_SAMPLE_VALUES[name];
    if (value === undefined) throw new Error(`${path}: no sample value for $(${name})`);
    return value;
  });
  return text
    .split(/^\s*GO\s*$/im)
    .filter((batch) => batch.trim() !== "")
    .map((sql, index) => ({ name: `${path} batch ${index + 1}`, sql, parameters: {}, parseOnly: true }));
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "check-sql-"));
  try {
    let input = process.argv[2];
    if (!input) {
      input = join(work, "statements.json");
      const statements = [...(await exportSqlStatements()), ...HOOK_SCRIPTS.flatMap(sqlcmdBatches)];
      writeFileSync(input, JSON.stringify(statements, null, 2));
    }
    const output = join(TOOLS_DIR, ".build", "sql-check");
    const project = join(TOOLS_DIR, "sql-check", "sql-check.csproj");
    dotnetOrExit(["restore", project, "--locked-mode", "-v", "q"], "restoring tools/sql-check");
    dotnetOrExit(
      ["build", project, "--no-restore", "-c", "Release", "-o", output, "--nologo", "-v", "q"],
      "building tools/sql-check",
    );
    const check = run("dotnet", [join(output, "sql-check.dll"), input]);
    process.stdout.write(check.output);
    process.exitCode = check.status;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
