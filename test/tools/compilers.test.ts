/**
 * `npm run check:infra` and `npm run check:sql` fail on a doctored input, naming the problem. They need the
 * .NET SDK: without `dotnet` these tests are skipped, saying so, except under CI (CI=true), where they fail.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../tools/dotnet.js";
import { exportSqlStatements } from "../../tools/export-sql-statements.js";

const dotnet = spawnSync("dotnet", ["--version"], { encoding: "utf8" });
const dotnetMissing = dotnet.error !== undefined || dotnet.status !== 0;
if (dotnetMissing) {
  const reason = "the .NET SDK (`dotnet`) is not installed";
  if (process.env.CI === "true") throw new Error(`${reason}; CI runs the compiler checks and needs it`);
  console.warn(`test/tools: the compiler checks are skipped: ${reason}`);
}
const describeWithDotnet = dotnetMissing ? describe.skip : describe;

const work = mkdtempSync(join(tmpdir(), "compilers-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function runTool(script: string, args: readonly string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, ["--import", "tsx", join(ROOT_DIR, "tools", script), ...args], {
    cwd: ROOT_DIR,
    encoding: "utf8",
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** A copy of infra/ with one file changed; `check:infra` is run on the copy, leaving the real one alone. */
function doctoredInfra(name: string, file: string, from: string | RegExp, to: string): string {
  const dir = join(work, name);
  cpSync(join(ROOT_DIR, "infra"), dir, { recursive: true });
  const path = join(dir, file);
  const source = readFileSync(path, "utf8");
  const changed = source.replace(from, to);
  if (changed === source) throw new Error(`${file}: nothing to doctor`);
  writeFileSync(path, changed);
  return dir;
}

/** Error and warning lines, less BCP104 ("the referenced module has errors"), which only echoes a module's. */
const failingLines = (output: string) =>
  output.split("\n").filter((line) => / (Error|Warning) /.test(line) && !line.includes(" BCP104:"));

describeWithDotnet("npm run check:infra", { timeout: 180_000 }, () => {
  it("fails on a misspelt resource property, naming it", () => {
    const infra = doctoredInfra(
      "misspelt",
      "modules/function-app.bicep",
      "httpsOnly: true",
      "httpsOnyl: true",
    );
    const { status, output } = runTool("check-infra.ts", ["--infra", infra, "--no-output"]);
    expect(status, output).toBe(1);
    expect(failingLines(output)).toEqual([
      expect.stringMatching(/function-app\.bicep\(\d+,\d+\) Warning BCP\d+: .*"httpsOnyl"/),
    ]);
    expect(output).toMatch(/0 errors, 1 warnings/);
  });

  it("fails on a linter rule made an error: a parameter nothing uses", () => {
    const infra = doctoredInfra(
      "unused",
      "modules/storage.bicep",
      "param name string",
      "param name string\nparam unusedSku string = 'Standard_LRS'",
    );
    const { status, output } = runTool("check-infra.ts", ["--infra", infra, "--no-output"]);
    expect(status, output).toBe(1);
    expect(failingLines(output)).toEqual([
      expect.stringMatching(/storage\.bicep\(\d+,\d+\) Error no-unused-params: .*unusedSku/),
    ]);
  });

  it("fails when queues.json loses a queue the typed module parameter requires", () => {
    const infra = doctoredInfra("queue-dropped", "queues.json", /,\s*"orderStatus": \{[^}]*\}/, "");
    const { status, output } = runTool("check-infra.ts", ["--infra", infra, "--no-output"]);
    expect(status, output).toBe(1);
    expect(output).toMatch(/main\.bicep\(\d+,\d+\) Error BCP\d+: .*orderStatus/);
  });
});

describeWithDotnet("npm run check:sql", { timeout: 180_000 }, () => {
  async function doctoredStatements(
    name: string,
    doctor: (statement: { name: string; sql: string; parameters: Record<string, string> }) => void,
  ) {
    const statements = (await exportSqlStatements()).map((s) => ({ ...s, parameters: { ...s.parameters } }));
    for (const statement of statements) doctor(statement);
    const path = join(work, `${name}.json`);
    writeFileSync(path, JSON.stringify(statements));
    return path;
  }

  it("fails on a T-SQL syntax error, naming the statement and where", async () => {
    const path = await doctoredStatements("syntax", (s) => {
      if (s.name === "INSERT_ORDER_IF_ABSENT")
        s.sql = s.sql.replace("WHERE order_id = @orderId);", "WHERE order_id = @orderId;");
    });
    const { status, output } = runTool("check-sql.ts", [path]);
    expect(status, output).toBe(1);
    expect(output.split("\n").filter((line) => line.startsWith("error:"))).toEqual([
      expect.stringMatching(/^error: INSERT_ORDER_IF_ABSENT: line \d+, column \d+: Incorrect syntax/),
    ]);
  });

  it("fails on a column the schema lacks and a parameter type the column does not take", async () => {
    const path = await doctoredStatements("schema", (s) => {
      if (s.name === "SELECT_ORDER") s.sql = s.sql.replace("customer_id", "customr_id");
      if (s.name === "INSERT_ORDER_IF_ABSENT") s.parameters.currency = "nvarchar (3)";
    });
    const { status, output } = runTool("check-sql.ts", [path]);
    expect(status, output).toBe(1);
    expect(output.split("\n").filter((line) => line.startsWith("error:"))).toEqual([
      expect.stringMatching(/^error: SELECT_ORDER: Error SQL71501: .*\[dbo\]\.\[orders\]\.\[customr_id\]/),
      "error: INSERT_ORDER_IF_ABSENT: @currency and orders.currency: a nvarchar(3) value meets a char(3) column (implicit conversion)",
    ]);
  });
});
