/**
 * `npm run check:infra`: compiles infra/main.bicep with the Bicep CLI pinned in tools/bicep, lints it with
 * infra/bicepconfig.json, and fails on any error or warning. On success it leaves the ARM template where
 * test/infra reads it (.build/infra/main.json), with a digest of the sources it came from.
 *
 * Both durable backends are in the one template (DURABLE_BACKEND picks one at deployment; the Durable Task
 * Scheduler's resources, role and settings are conditional), so this builds and lints both; it also fails if
 * the template stops offering either (test/infra/durable-backend.test.ts expands it for each).
 *
 *   tsx tools/check-infra.ts [--infra <dir>] [--no-output]
 */
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import { restoreBicep, run } from "./dotnet.js";
import {
  COMPILED_TEMPLATE,
  COMPILED_TEMPLATE_DIGEST,
  INFRA_DIR,
  infraSourcesDigest,
} from "./infra-sources.js";

export interface BicepDiagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly level: "Error" | "Warning" | "Info";
  readonly code: string;
  readonly message: string;
}

/** The values of DURABLE_BACKEND the deployment offers. */
const DURABLE_BACKENDS = ["azureStorage", "dts"] as const;

/** The durable backends a compiled template's `durableBackend` parameter allows. */
function durableBackends(templateJson: string): string[] {
  const template = JSON.parse(templateJson) as {
    parameters?: { durableBackend?: { allowedValues?: unknown[] } };
  };
  return (template.parameters?.durableBackend?.allowedValues ?? []).map(String);
}

const DIAGNOSTIC = /^(.+)\((\d+),(\d+)\) : (Error|Warning|Info) ([\w-]+): (.*)$/;

/** Bicep's diagnostics in its default text form; other non-empty lines are returned as `other`. */
export function parseDiagnostics(output: string): { diagnostics: BicepDiagnostic[]; other: string[] } {
  const diagnostics: BicepDiagnostic[] = [];
  const other: string[] = [];
  for (const line of output.split("\n").map((l) => l.trim())) {
    const match = DIAGNOSTIC.exec(line);
    if (match) {
      const [, file = "", lineNo, column, level, code = "", message = ""] = match;
      diagnostics.push({
        file,
        line: Number(lineNo),
        column: Number(column),
        level: level as BicepDiagnostic["level"],
        code,
        message,
      });
    } else if (line !== "") other.push(line);
  }
  return { diagnostics, other };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      infra: { type: "string", default: INFRA_DIR },
      "no-output": { type: "boolean", default: false },
    },
  });
  const infraDir = values.infra;
  const entry = join(infraDir, "main.bicep");
  const bicep = restoreBicep();
  chmodSync(bicep.path, 0o755);

  const work = mkdtempSync(join(tmpdir(), "check-infra-"));
  try {
    const template = join(work, "main.json");
    const build = run(bicep.path, ["build", entry, "--outfile", template]);
    const lint = run(bicep.path, ["lint", entry]);
    const seen = new Set<string>();
    const diagnostics: BicepDiagnostic[] = [];
    const other: string[] = [];
    for (const result of [build, lint]) {
      const parsed = parseDiagnostics(result.output);
      other.push(...parsed.other);
      for (const d of parsed.diagnostics) {
        const key = `${d.file}:${d.line}:${d.column}:${d.code}`;
        if (!seen.has(key)) diagnostics.push(d);
        seen.add(key);
      }
    }
    for (const d of diagnostics) {
      console.log(
        `${relative(process.cwd(), d.file)}(${d.line},${d.column}) ${d.level} ${d.code}: ${d.message}`,
      );
    }
    for (const line of other) console.log(line);
    const failing = diagnostics.filter((d) => d.level !== "Info");
    const failed = build.status !== 0 || lint.status !== 0 || failing.length > 0;
    console.log(
      `check:infra: Bicep ${bicep.version}, ${entry}: ${failing.filter((d) => d.level === "Error").length} errors, ` +
        `${failing.filter((d) => d.level === "Warning").length} warnings` +
        (build.status !== 0 || lint.status !== 0
          ? ` (build exit ${build.status}, lint exit ${lint.status})`
          : ""),
    );
    if (failed) process.exit(1);
    const backends = durableBackends(readFileSync(template, "utf8"));
    if (backends.join() !== DURABLE_BACKENDS.join()) {
      console.log(
        `check:infra: the template's durableBackend allows ${backends.join(", ") || "nothing"}; expected ${DURABLE_BACKENDS.join(", ")}`,
      );
      process.exit(1);
    }
    console.log(`check:infra: durable backends in the template: ${backends.join(", ")}`);

    if (!values["no-output"]) {
      mkdirSync(dirname(COMPILED_TEMPLATE), { recursive: true });
      copyFileSync(template, COMPILED_TEMPLATE);
      writeFileSync(COMPILED_TEMPLATE_DIGEST, `${infraSourcesDigest(infraDir)}\n`);
      console.log(`check:infra: ARM template written to ${relative(process.cwd(), COMPILED_TEMPLATE)}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main();
