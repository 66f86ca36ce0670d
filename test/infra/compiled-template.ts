/**
 * The ARM template `npm run check:infra` compiles from infra/main.bicep, expanded for one set of parameter
 * values: every module's resources, copy loops unrolled, expressions evaluated as far as they can be
 * before a deployment (./arm-expressions.ts).
 *
 * The template is missing where the .NET SDK is: `npm test` then skips the tests that read it, saying so.
 * Under CI (CI=true) a missing template fails instead, and a template older than the Bicep always fails.
 */
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import {
  COMPILED_TEMPLATE,
  COMPILED_TEMPLATE_DIGEST,
  INFRA_DIR,
  infraSourcesDigest,
} from "../../tools/infra-sources.js";
import { evaluate, type Scope, Unresolved } from "./arm-expressions.js";

interface RawResource {
  readonly type: string;
  readonly apiVersion: string;
  readonly name: string;
  readonly existing?: boolean;
  readonly condition?: unknown;
  readonly copy?: { readonly name: string; readonly count: unknown };
  readonly properties?: {
    readonly template?: RawTemplate;
    /** `{ value }`, or an expression that yields one (Bicep's `cond ? a : b` for a module parameter). */
    readonly parameters?: Record<string, { value: unknown } | string>;
  };
  readonly [key: string]: unknown;
}

interface RawParameter {
  readonly type: string;
  readonly defaultValue?: unknown;
  readonly allowedValues?: readonly unknown[];
}

export interface RawTemplate {
  readonly parameters?: Record<string, RawParameter>;
  readonly variables?: Record<string, unknown>;
  readonly resources: RawResource[] | Record<string, RawResource>;
  readonly outputs?: Record<string, { type: string; value: unknown }>;
}

export interface DeployedResource {
  /** The Bicep module it is declared in: `main`, or the module deployment's name (`function-app`). */
  readonly module: string;
  readonly symbolicName: string | undefined;
  readonly type: string;
  readonly apiVersion: string;
  readonly existing: boolean;
  /**
   * The resource with its expressions evaluated: name, scope, properties, condition (true when absent; false
   * too when its module's deployment is conditional and not deployed).
   */
  readonly body: Readonly<Record<string, unknown>>;
}

export interface Deployment {
  readonly module: string;
  /** Whether the module is deployed: true, false, or an Unresolved expression only the deployment decides. */
  readonly condition: unknown;
  readonly template: RawTemplate;
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly outputs: Readonly<Record<string, unknown>>;
}

/**
 * The values main.bicep is deployed with here; the deployment gives the rest. No partnerUrl: the default, which
 * deploys the simulated partner, as `azd env new x && azd up` does.
 */
export const MAIN_PARAMETERS: Readonly<Record<string, unknown>> = {
  environmentName: "orders-test",
  location: "westeurope",
  principalId: "deployer-object-id",
  principalType: "User",
  alertEmail: "ops@example.com",
};

/** A partner of the user's (PARTNER_URL set): the deployment then has no simulated partner. */
export const GIVEN_PARTNER_URL = "https://partner.example";

/** Variables evaluated on first use, so that one may refer to another declared after it. */
function lazyVariables(raw: Record<string, unknown>, scopeOf: () => Scope): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    Object.defineProperty(values, name, {
      enumerable: true,
      get: () => {
        const evaluated = evaluate(value, scopeOf());
        Object.defineProperty(values, name, { value: evaluated, enumerable: true });
        return evaluated;
      },
      configurable: true,
    });
  }
  return values;
}

function scopeFor(template: RawTemplate, given: Readonly<Record<string, unknown>>, module: string): Scope {
  const parameters: Record<string, unknown> = {};
  const scope: Scope = { parameters, variables: lazyVariables(template.variables ?? {}, () => scope) };
  for (const [name, declaration] of Object.entries(template.parameters ?? {})) {
    if (name in given) parameters[name] = given[name];
    else if ("defaultValue" in declaration) parameters[name] = evaluate(declaration.defaultValue, scope);
    else throw new Error(`${module}: parameter ${name} has neither a value nor a default`);
  }
  const unknown = Object.keys(given).filter((name) => !(name in parameters));
  if (unknown.length > 0) throw new Error(`${module}: no parameter ${unknown.join(", ")}`);
  return scope;
}

/** A module parameter's value: `{ value }` as written, or what an expression yielding `{ value }` gives. */
function parameterValue(parameter: { value: unknown } | string, scope: Scope): unknown {
  if (typeof parameter !== "string") return evaluate(parameter.value, scope);
  const whole = evaluate(parameter, scope);
  if (whole instanceof Unresolved) return new Unresolved(`${whole.text}.value`);
  return (whole as { value?: unknown }).value;
}

/** Both conditions: false when either is, the other when one is true, an Unresolved `and(...)` otherwise. */
function both(outer: unknown, inner: unknown): unknown {
  if (outer === false || inner === false) return false;
  if (outer === true) return inner;
  if (inner === true) return outer;
  return new Unresolved(`and(${String(outer)}, ${String(inner)})`);
}

/**
 * Every module deployment and every resource of a template, modules included, for the given values. A module
 * whose condition is false is still expanded, its resources marked with condition false.
 */
export function expand(
  template: RawTemplate,
  given: Readonly<Record<string, unknown>>,
  module = "main",
  condition: unknown = true,
): { deployments: Deployment[]; resources: DeployedResource[] } {
  const scope = scopeFor(template, given, module);
  const deployments: Deployment[] = [];
  const resources: DeployedResource[] = [];
  const entries: [string | undefined, RawResource][] = Array.isArray(template.resources)
    ? template.resources.map((resource) => [undefined, resource])
    : Object.entries(template.resources);

  for (const [symbolicName, raw] of entries) {
    const count = raw.copy ? evaluate(raw.copy.count, scope) : 1;
    if (typeof count !== "number")
      throw new Error(`${module}: copy count of ${raw.type} is ${String(count)}`);
    for (let index = 0; index < count; index++) {
      const itemScope: Scope = raw.copy ? { ...scope, copyIndex: index } : scope;
      const nested = raw.properties?.template;
      if (raw.type === "Microsoft.Resources/deployments" && nested) {
        const name = String(evaluate(raw.name, itemScope));
        const values = Object.fromEntries(
          Object.entries(raw.properties?.parameters ?? {}).map(([key, p]) => [
            key,
            parameterValue(p, itemScope),
          ]),
        );
        const own = raw.condition === undefined ? true : evaluate(raw.condition, itemScope);
        const inner = expand(nested, values, name, both(condition, own));
        deployments.push(...inner.deployments);
        resources.push(...inner.resources);
        continue;
      }
      const { copy: _copy, dependsOn: _dependsOn, ...rest } = raw;
      const body = evaluate({ condition: true, ...rest }, itemScope) as Record<string, unknown>;
      body.condition = both(condition, body.condition);
      resources.push({
        module,
        symbolicName,
        type: raw.type,
        apiVersion: raw.apiVersion,
        existing: raw.existing === true,
        body,
      });
    }
  }
  const outputs = Object.fromEntries(
    Object.entries(template.outputs ?? {}).map(([name, output]) => [name, evaluate(output.value, scope)]),
  );
  deployments.unshift({ module, condition, template, parameters: scope.parameters, outputs });
  return { deployments, resources };
}

/** The deployment name and output a module output reference names: `reference(...'storage'...).outputs.name.value`. */
export function moduleOutput(value: unknown): string | undefined {
  if (!(value instanceof Unresolved)) return undefined;
  const match = /'Microsoft\.Resources\/deployments', '([^']+)'\)[^)]*\)\.outputs\.(\w+)\.value$/.exec(
    value.text,
  );
  return match ? `${match[1]}.outputs.${match[2]}` : undefined;
}

export type CompiledTemplate = { readonly template: RawTemplate } | { readonly skipReason: string };

/** The compiled template, or why the tests that need it are skipped; throws where skipping is not allowed. */
export function loadCompiledTemplate(): CompiledTemplate {
  const where = relative(process.cwd(), COMPILED_TEMPLATE);
  if (!existsSync(COMPILED_TEMPLATE)) {
    const reason = `${where} is absent: run \`npm run check:infra\` (it needs the .NET SDK) to compile infra/`;
    if (process.env.CI === "true") throw new Error(`${reason}; under CI, .ci/run must do so before npm test`);
    return { skipReason: reason };
  }
  const recorded = existsSync(COMPILED_TEMPLATE_DIGEST)
    ? readFileSync(COMPILED_TEMPLATE_DIGEST, "utf8").trim()
    : "";
  if (recorded !== infraSourcesDigest(INFRA_DIR)) {
    throw new Error(
      `${where} was compiled from other sources than infra/ holds now: run \`npm run check:infra\``,
    );
  }
  return { template: JSON.parse(readFileSync(COMPILED_TEMPLATE, "utf8")) as RawTemplate };
}
