/**
 * What azd reads besides the Bicep: the services of azure.yaml, and the files it zips for each service. azd
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
