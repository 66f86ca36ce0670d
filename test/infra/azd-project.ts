/**
 * What azd reads besides the Bicep: the services of azure.yaml and their conditions, the variables of
 * main.parameters.json, and the files it zips for each service. azd
 * zips the service's folder less what its ignore file names (.funcignore for a Function App, .webappignore
 * for App Service), read with gitignore's rules; `git ls-files` applies the same rules here, to every file
 * on disk (none taken as tracked, .gitignore not consulted, as azd does not consult it).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface AzdService {
  readonly name: string;
  readonly properties: Readonly<Record<string, string>>;
}

/**
 * The `services:` block of azure.yaml, as this repository writes it: a service per two-space-indented key,
 * its scalar properties four spaces in. Nested blocks (a service's hooks) are skipped.
 */
export function azdServices(yaml: string): AzdService[] {
  const services: { name: string; properties: Record<string, string> }[] = [];
  let inServices = false;
  for (const line of yaml.split("\n")) {
    if (/^\S/.test(line)) inServices = line.startsWith("services:");
    if (!inServices || /^\s*(#.*)?$/.test(line)) continue;
    const service = /^ {2}([\w-]+):\s*$/.exec(line);
    const property = /^ {4}(\w+):\s*(\S.*?)\s*$/.exec(line);
    if (service?.[1]) services.push({ name: service[1], properties: {} });
    else if (property?.[1] && property[2] !== undefined) {
      const current = services.at(-1);
      if (current) current.properties[property[1]] = property[2];
    }
  }
  return services;
}

/** The files azd would put in a service's package, relative to the project folder, sorted. */
export function packagedFiles(projectDir: string, ignoreFile: string): string[] {
  const listed = execFileSync(
    "git",
    ["ls-files", "--others", "--exclude-from", join(projectDir, ignoreFile)],
    // An index that does not exist (git only reads it): every file counts as untracked, so the ignore file
    // decides alone.
    {
      cwd: projectDir,
      encoding: "utf8",
      env: { ...process.env, GIT_INDEX_FILE: join(tmpdir(), `no-index-${randomUUID()}`) },
    },
  );
  return listed
    .split("\n")
    .filter((path) => path !== "" && path !== ignoreFile)
    .sort();
}

/** `${body}` as azd writes a variable in azure.yaml and main.parameters.json: `azdVariable("PARTNER_URL:-true")`. */
export const azdVariable = (body: string): string => `\${${body}}`;

/** Variables azd itself fills in for `azd env new` and `azd up`: the environment's name, its region, the deployer. */
export const AZD_OWN_VARIABLES = [
  "AZURE_ENV_NAME",
  "AZURE_LOCATION",
  "AZURE_PRINCIPAL_ID",
  "AZURE_PRINCIPAL_TYPE",
];

/**
 * Parameters that `azd up` in a new environment would ask the user for. azd substitutes `${VAR}` in
 * main.parameters.json from the environment and leaves out a parameter whose variable is unset, so a parameter
 * is answered when azd fills its variable, when the file gives a default (`${VAR=default}`), or when the
 * template has a default; otherwise azd prompts for it.
 */
export function askedParameters(
  declared: Readonly<Record<string, { readonly type?: string; readonly defaultValue?: unknown }>>,
  file: Readonly<Record<string, { readonly value?: unknown }>>,
): string[] {
  return Object.entries(declared)
    .filter(([name, declaration]) => {
      if ("defaultValue" in declaration) return false;
      const value = file[name]?.value;
      if (typeof value !== "string") return value === undefined;
      const variables = [...value.matchAll(/\$\{(\w+)(=[^}]*)?\}/g)];
      const literal = variables.length === 0;
      return (
        !literal &&
        !variables.every(
          ([, variable = "", fallback]) => fallback !== undefined || AZD_OWN_VARIABLES.includes(variable),
        )
      );
    })
    .map(([name]) => name);
}

const TRUTHY = ["1", "true", "TRUE", "True", "yes", "YES", "Yes"];

/**
 * Whether azd deploys a service with this `condition`: azd expands `${VAR}` and `${VAR:-default}` from the
 * environment (its envsubst also gives the default for an empty variable) and deploys only on a truthy result.
 * The forms azure.yaml uses, nothing more.
 */
export function azdConditionHolds(condition: string, env: Readonly<Record<string, string>>): boolean {
  const expanded = condition.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
    const value = env[name] ?? "";
    return value === "" && fallback !== undefined ? fallback : value;
  });
  return TRUTHY.includes(expanded);
}
