/**
 * Checks of the storefront's part of the deployment: what its identity may do, and who else can reach its
 * private status queue. Each returns what it finds, so that a test can also show it failing on a doctored
 * input.
 */
import { QUEUE_NAMES } from "../../src/config/names.js";
import { STOREFRONT_SETTINGS } from "../../storefront/settings.js";
import { type AppSettings, BUILT_IN_ROLES, type RoleAssignment, type RoleNeed } from "./deployment-checks.js";

const QUEUE = "Microsoft.ServiceBus/namespaces/queues";
const NAMESPACE = "Microsoft.ServiceBus/namespaces";
/** Scopes that contain every queue of the deployment: the resource group, the subscription, or none named. */
const ABOVE_NAMESPACE = [
  "Microsoft.Resources/resourceGroups",
  "Microsoft.Resources/subscriptions",
  "<undefined>",
];

/** What the storefront's identity needs, on what: its two queues, and nothing else. */
export const STOREFRONT_NEEDS: readonly RoleNeed[] = [
  {
    scope: QUEUE,
    scopeName: QUEUE_NAMES.orders,
    role: BUILT_IN_ROLES.serviceBusDataSender,
    why: "checkout sends the order message",
  },
  {
    scope: QUEUE,
    scopeName: QUEUE_NAMES.storefrontStatus,
    role: BUILT_IN_ROLES.serviceBusDataReceiver,
    why: "it reads its own status queue",
  },
];

/** Settings App Service and its build (Oryx) read, rather than storefront/settings.ts. */
export const STOREFRONT_PLATFORM_SETTINGS: readonly string[] = [
  "SCM_DO_BUILD_DURING_DEPLOYMENT",
  "POST_BUILD_COMMAND",
  "WEBSITES_ENABLE_APP_SERVICE_STORAGE",
];

/** Settings of the storefront's site that neither its code nor the platform reads. */
export function unreadSettings(settings: AppSettings): string[] {
  const read = new Set<string>([...Object.values(STOREFRONT_SETTINGS), ...STOREFRONT_PLATFORM_SETTINGS]);
  return [...settings.keys()].filter((name) => !read.has(name)).map((name) => `${name}: nothing reads it`);
}

const RECEIVERS = [BUILT_IN_ROLES.serviceBusDataReceiver, BUILT_IN_ROLES.serviceBusDataOwner];
const SENDERS = [BUILT_IN_ROLES.serviceBusDataSender, BUILT_IN_ROLES.serviceBusDataOwner];
const KNOWN_ROLES: readonly string[] = Object.values(BUILT_IN_ROLES);

/**
 * Whether a role may receive from a queue (Service Bus's Listen data action): Data Receiver and Data Owner
 * do, and so, for all this check knows, does any role that is not one of the built-in roles it knows.
 */
export function mayReceive(role: string): boolean {
  return RECEIVERS.includes(role as (typeof RECEIVERS)[number]) || !KNOWN_ROLES.includes(role);
}

function maySend(role: string): boolean {
  return SENDERS.includes(role as (typeof SENDERS)[number]) || !KNOWN_ROLES.includes(role);
}

/**
 * Whether an assignment's scope contains the queue: the queue itself, its namespace, the resource group or
 * the subscription. A queue scope whose name only the deployment knows, or a scope the check cannot read,
 * is taken to contain it.
 */
export function reachesQueue(assignment: RoleAssignment, queue: string): boolean {
  if (assignment.scope === QUEUE) return assignment.scopeName === undefined || assignment.scopeName === queue;
  if (assignment.scope === NAMESPACE || ABOVE_NAMESPACE.includes(assignment.scope)) return true;
  return assignment.scope.startsWith("<");
}

const described = (a: RoleAssignment) =>
  `${a.principal} holds role ${a.role} on ${a.scope}${a.scopeName ? ` ${a.scopeName}` : ""}`;

/** Every assignment that lets its holder receive from the queue. */
export function receiversOf(assignments: readonly RoleAssignment[], queue: string): string[] {
  return assignments.filter((a) => mayReceive(a.role) && reachesQueue(a, queue)).map(described);
}

/** Whether the principal holds a role that lets it send to the queue. */
export function maySendTo(assignments: readonly RoleAssignment[], principal: string, queue: string): boolean {
  return assignments.some((a) => a.principal === principal && maySend(a.role) && reachesQueue(a, queue));
}

/**
 * Roles that can receive, granted on the namespace or above: each reaches every queue, the storefront's
 * private one included, and whatever private queue a later submitter adds.
 */
export function broadReceivers(assignments: readonly RoleAssignment[]): string[] {
  return assignments
    .filter((a) => mayReceive(a.role) && (a.scope === NAMESPACE || ABOVE_NAMESPACE.includes(a.scope)))
    .map(described);
}
