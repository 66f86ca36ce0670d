// The Key Vault that holds the key ring sealing the state store's personal and payment fields
// (DATA_PROTECTION_KEYS) and, with the simulated partner, the access key only the Function App may call it with
// (PARTNER_ACCESS_KEY). Access by Azure RBAC only: the apps' identities read the secrets through Key Vault
// references in their settings; the deploying principal writes them (infra/scripts/create-data-protection-keys.sh,
// infra/scripts/create-partner-access-key.sh).

import { tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType
@description('Purge protection: a deleted vault, and the keys that open the stored records, stay recoverable for 90 days.')
param protect bool
@description('recover: bring back this environment\'s vault, deleted by `azd down` and still held for 90 days under its name (infra/scripts/key-vault-create-mode.sh decides); default: create or update it.')
@allowed(['default', 'recover'])
param createMode string

resource vault 'Microsoft.KeyVault/vaults@2026-05-15' = {
  name: name
  location: location
  tags: tags
  properties: {
    createMode: createMode
    tenantId: tenant().tenantId
    sku: { family: 'A', name: 'standard' }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    // Once on it cannot be turned off, so it is left unset rather than false when not protecting.
    enablePurgeProtection: protect ? true : null
  }
}

output name string = vault.name
output id string = vault.id
