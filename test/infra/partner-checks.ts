/**
 * Checks of the simulated partner's part of the deployment: which settings its site may carry, and what its
 * identity needs. Each returns what it finds, so that a test can also show it failing on a doctored input.
 */
import { FAULT_SETTINGS, PARTNER_SETTINGS } from "../../partner/settings.js";
import { type AppSettings, BUILT_IN_ROLES, KEY_VAULT_SECRET, type RoleNeed } from "./deployment-checks.js";

/**
 * What the partner's identities need, on what: its own storage account (its books), and nothing else there; its
 * access key, the one secret of the vault it reads.
 */
export const PARTNER_NEEDS: readonly RoleNeed[] = [
  {
    scope: "Microsoft.Storage/storageAccounts",
    role: BUILT_IN_ROLES.storageBlobDataContributor,
    why: "its append-blob journal",
  },
  {
    scope: KEY_VAULT_SECRET,
    scopeName: "partner-access-key",
    role: BUILT_IN_ROLES.keyVaultSecretsUser,
    why: "PARTNER_ACCESS_KEY, a Key Vault reference",
  },
];

/** Settings App Service and its build (Oryx) read, rather than partner/settings.ts. */
export const PARTNER_PLATFORM_SETTINGS: readonly string[] = [
  "SCM_DO_BUILD_DURING_DEPLOYMENT",
  "POST_BUILD_COMMAND",
];

/** Every setting partner/settings.ts reads. */
export const PARTNER_SETTINGS_READ: readonly string[] = [
  ...Object.values(PARTNER_SETTINGS),
  ...Object.values(FAULT_SETTINGS).map((setting) => setting.name),
];

/** Settings of the partner's site that neither its code nor the platform reads. */
export function unreadPartnerSettings(settings: AppSettings): string[] {
  const read = new Set<string>([...PARTNER_SETTINGS_READ, ...PARTNER_PLATFORM_SETTINGS]);
  return [...settings.keys()].filter((name) => !read.has(name)).map((name) => `${name}: nothing reads it`);
}

/** Settings for a laptop or Azurite only: in Azure the books are the container URL, reached with the identity. */
export const PARTNER_LOCAL_ONLY_SETTINGS: readonly string[] = [
  PARTNER_SETTINGS.connectionString,
  PARTNER_SETTINGS.container,
  PARTNER_SETTINGS.file,
];
