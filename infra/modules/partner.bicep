// The simulated partner (partner/main.ts) deployed beside the Function App, so that `azd up` needs no partner of
// the user's: a Node.js web app on the storefront's App Service plan (no extra cost) with a system-assigned
// identity, keeping its books (an append-blob journal) in a storage account of its own (its role there is in
// access.bicep). Two locks: App Service admits only the Function App's subnet (partner-network.bicep), and the
// app answers only callers holding the shared access key. The key is a secret of the deployment's Key Vault,
// which this app and the Function App read through Key Vault references (key-vault-secrets.bicep grants this
// app's user-assigned identity that one secret; infra/scripts/create-partner-access-key.sh writes it).

import { tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType
@description('The service name of azure.yaml; azd finds the app by this tag.')
param serviceName string
@description('Node.js major version of the runtime stack (NODE|<major>-lts).')
param nodeVersion string
@description('The App Service plan it shares with the storefront (app-service-plan.bicep).')
param planId string
@description('Name of the partner\'s own storage account: its books, and nothing else.')
param storageAccountName string
@description('The Key Vault holding the shared access key.')
param keyVaultName string
@description('The secret in it that holds the key (PARTNER_ACCESS_KEY of both apps).')
param accessKeySecretName string
@description('The user-assigned identity the site resolves its Key Vault reference with, granted that one secret before the site exists (key-vault-secrets.bicep).')
param keyVaultReferenceIdentityId string
@description('Fault rates it starts with (PARTNER_FAULT_*), each from 0 to 1; the operator changes them at run time through the Function App\'s /api/partner.')
param faultRates {
  transient: string
  permanent: string
  slow: string
  lostReply: string
} = { transient: '0.1', permanent: '0.01', slow: '0.03', lostReply: '0.01' }
@description('How long a slow answer takes (PARTNER_SLOW_MS).')
param slowMs int = 15000
@description('Seed of the fault draws (PARTNER_SEED).')
param seed int = 7
@description('Answers 200 without the access key, 503 once the partner\'s books fail; App Service probes it once a minute.')
param healthCheckPath string = '/health'
@description('The Function App\'s subnet (partner-network.bicep): the only source App Service lets through to the partner.')
param functionAppSubnetId string

// tsconfig.partner.json compiles partner/ (and what it imports of src/) into dist/partner/.
var startCommand = 'node dist/partner/partner/main.js'
var ledgerContainerName = 'partner-ledger'

module ledgerStorage 'storage.bicep' = {
  name: 'partner-storage'
  params: {
    name: storageAccountName
    location: location
    tags: tags
    containerNames: [ledgerContainerName]
  }
}

// Names follow partner/settings.ts (test/infra keeps them in step); the rest are App Service's own. PORT comes
// from App Service, and PARTNER_HOST's default (all interfaces) is what App Service needs.
var appSettings = [
  // azd uploads the package built locally (tools/web-app-package.ts): compiled, with only its runtime packages and
  // better-sqlite3 built for Linux x64 and this Node.js major. App Service runs it as it is, without a build.
  { name: 'SCM_DO_BUILD_DURING_DEPLOYMENT', value: 'false' }
  { name: 'PARTNER_LEDGER_CONTAINER_URL', value: '${ledgerStorage.outputs.blobEndpoint}${ledgerContainerName}' }
  // Resolved by the platform with the app's identity; the value never appears in the deployment.
  {
    name: 'PARTNER_ACCESS_KEY'
    value: '@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName=${accessKeySecretName})'
  }
  { name: 'PARTNER_FAULT_TRANSIENT', value: faultRates.transient }
  { name: 'PARTNER_FAULT_PERMANENT', value: faultRates.permanent }
  { name: 'PARTNER_FAULT_SLOW', value: faultRates.slow }
  { name: 'PARTNER_FAULT_LOST_REPLY', value: faultRates.lostReply }
  { name: 'PARTNER_SLOW_MS', value: string(slowMs) }
  { name: 'PARTNER_SEED', value: string(seed) }
]

resource site 'Microsoft.Web/sites@2025-03-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': serviceName })
  kind: 'app,linux'
  identity: { type: 'SystemAssigned, UserAssigned', userAssignedIdentities: { '${keyVaultReferenceIdentityId}': {} } }
  properties: {
    serverFarmId: planId
    keyVaultReferenceIdentity: keyVaultReferenceIdentityId
    httpsOnly: true
    clientAffinityEnabled: false
    siteConfig: {
      linuxFxVersion: 'NODE|${nodeVersion}-lts'
      appCommandLine: startCommand
      // The partner's journal is group-committed by the one running process; an idle-out would only add a cold
      // start to the Agents' calls, which their deadline counts.
      alwaysOn: true
      healthCheckPath: healthCheckPath
      minTlsVersion: '1.2'
      scmMinTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      appSettings: appSettings
      // Only the Function App reaches the partner: its calls come through its subnet's Microsoft.Web service
      // endpoint; anything else is refused 403 by App Service before the partner sees it. The health check
      // probes each instance from inside the platform, not through these rules.
      ipSecurityRestrictionsDefaultAction: 'Deny'
      ipSecurityRestrictions: [
        {
          name: 'function-app'
          description: 'The Function App (the Agents and the operator\'s partner controls)'
          action: 'Allow'
          priority: 100
          vnetSubnetResourceId: functionAppSubnetId
        }
      ]
      // The deployment site (Kudu), which azd deploys through, keeps its own rules: open to the network, and
      // behind Entra ID alone (publishing passwords are off, below).
      scmIpSecurityRestrictionsUseMain: false
      scmIpSecurityRestrictionsDefaultAction: 'Allow'
    }
  }
}

// Deployments (azd included) authenticate with Entra ID; publishing user names and passwords stay off.
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: site
  name: 'ftp'
  properties: { allow: false }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: site
  name: 'scm'
  properties: { allow: false }
}

output name string = site.name
output id string = site.id
output principalId string = site.identity.principalId
output defaultHostName string = site.properties.defaultHostName
output storageAccountName string = ledgerStorage.outputs.name
