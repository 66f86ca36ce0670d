/**
 * `npm run check:sql`: every T-SQL text the SQL adapter sends, exported from the TypeScript source, is
 * parsed by ScriptDom (TSql160Parser) and checked against the schema the migrations build, in a DacFx model,
 * by the .NET tool in tools/sql-check. Fails on any error.
 *
 *   tsx tools/check-sql.ts [<statements.json>]   (default: export them from src/adapters/sql)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dotnetOrExit, run, TOOLS_DIR } from "./dotnet.js";
import { exportSqlStatements } from "./export-sql-statements.js";

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "check-sql-"));
  try {
    let input = process.argv[2];
    if (!input) {
      input = join(work, "statements.json");
      writeFileSync(input, JSON.stringify(await exportSqlStatements(), null, 2));
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
