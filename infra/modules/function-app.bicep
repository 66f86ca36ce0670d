// The Function App on Flex Consumption, with a user-assigned identity (user-identity.bicep, made and granted its
// roles before this site) and identity-based connections only: every setting below names an endpoint and that
// identity's client id, never a key, password, SAS or connection string. The identity is the app's only one, so
// every connection names it: the host's (`__credential`, `__clientId`), the app's own (AZURE_CLIENT_ID, which
// src/adapters/azure-credential.ts and the SQL driver read), Application Insights' and the scheduler's.

import { tagsType } from '../types.bicep'

param name string
param planName string
param location string
param tags tagsType
@description('The service name of azure.yaml; azd finds the app by this tag.')
param serviceName string
param nodeVersion string
param maximumInstanceCount int = 40
param instanceMemoryMB int = 2048
param storageAccountName string
param deploymentContainerName string
param leaseContainerName string
param taskHubName string
param appInsightsName string
param serviceBusNamespace string
param cosmosEndpoint string
param cosmosDatabaseName string
param sqlServerFqdn string
param sqlDatabaseName string
@description('Base URL of the partner the Agents call: the simulated partner\'s, or the one the deployment was given.')
param partnerUrl string
@description('The Key Vault secret holding the simulated partner\'s access key (PARTNER_ACCESS_KEY); empty for a partner of the user\'s, which takes no key from this deployment.')
param partnerAccessKeySecretName string
param agentRequestMaxDeliveries int
// Slower than the code's defaults (10 s and 1 min), which suit a laptop. A timer firing every few seconds or every
// minute keeps an instance, and with Azure Storage the task hub's polling, alive around the clock: Flex
// Consumption takes an app to zero instances only after a few idle minutes. Every 5 minutes, and at the same
// moment, lets it scale in between ticks. The starter's timer is its fallback: a submission and every settled
// order start it at once; only a claim put back after a failed start, or a recovery's retry, waits for the
// timer. The Supervisor notices an attempt past its deadline up to 5 minutes later instead of 1.
@description('NCRONTAB schedules of the starter and the Supervisor; the host resolves %STARTER_SCHEDULE% and %SUPERVISOR_SCHEDULE% from these settings.')
param starterSchedule string = '0 */5 * * * *'
param supervisorSchedule string = '0 */5 * * * *'
@description('NCRONTAB schedule of the retention timer, which purges the histories of expired orders (%RETENTION_SCHEDULE%).')
param retentionSchedule string = '0 5 * * * *'
@minValue(1)
@maxValue(3650)
param retentionDays int
@description('The Key Vault holding the data-protection key ring and the partner\'s access key, read through Key Vault references.')
param keyVaultName string
@description('The secret in it that holds the key ring.')
param dataProtectionSecretName string
@description('The Durable Functions backend: azureStorage (the task hub in the host\'s storage account) or dts.')
@allowed(['azureStorage', 'dts'])
param durableBackend string
@description('The Durable Task Scheduler\'s endpoint (durable-task.bicep) with dts; empty otherwise.')
param durableTaskSchedulerEndpoint string
@description('The subnet the app joins (virtual network integration), the one the simulated partner admits (partner-network.bicep); empty for none, with a partner of the user\'s.')
param virtualNetworkSubnetId string = ''
@description('The app\'s user-assigned identity (its resource id), which holds its roles and reads its Key Vault secrets.')
param identityId string
@description('That identity\'s client id, which every identity-based connection names.')
param identityClientId string

resource storage 'Microsoft.Storage/storageAccounts@2026-09-01' existing = {
  name: storageAccountName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

// Names follow src/config (names.ts, azure-settings.ts, settings.ts); test/infra keeps them in step. A plain
// list, because a for-expression cannot range over values known only during the deployment.
// FUNCTIONS_WORKER_RUNTIME is not set: on Flex Consumption, functionAppConfig.runtime declares it.
var commonSettings = [
  // The host and Durable Functions (Azure Storage backend) need all three services; the code reads the blob one.
  { name: 'AzureWebJobsStorage__blobServiceUri', value: storage.properties.primaryEndpoints.blob }
  { name: 'AzureWebJobsStorage__queueServiceUri', value: storage.properties.primaryEndpoints.queue }
  { name: 'AzureWebJobsStorage__tableServiceUri', value: storage.properties.primaryEndpoints.table }
  { name: 'AzureWebJobsStorage__credential', value: 'managedidentity' }
  { name: 'AzureWebJobsStorage__clientId', value: identityClientId }
  // The identity the app's own clients authenticate as (the host's connections name it themselves).
  { name: 'AZURE_CLIENT_ID', value: identityClientId }
  { name: 'TASKHUB_NAME', value: taskHubName }
  // Timer schedules are binding expressions: the host needs the settings themselves, not the code's defaults.
  { name: 'STARTER_SCHEDULE', value: starterSchedule }
  { name: 'SUPERVISOR_SCHEDULE', value: supervisorSchedule }
  { name: 'RETENTION_SCHEDULE', value: retentionSchedule }
  // Identifies the resource only: with local auth off, ingestion needs the Entra token asked for below.
  { name: 'APPLICATIONINSIGHTS_CONNECTION_STRING', value: appInsights.properties.ConnectionString }
  { name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING', value: 'ClientId=${identityClientId};Authorization=AAD' }
  { name: 'ServiceBusConnection__fullyQualifiedNamespace', value: serviceBusNamespace }
  { name: 'ServiceBusConnection__credential', value: 'managedidentity' }
  { name: 'ServiceBusConnection__clientId', value: identityClientId }
  { name: 'CosmosDb__endpoint', value: cosmosEndpoint }
  { name: 'CosmosDb__database', value: cosmosDatabaseName }
  { name: 'OrdersSql__server', value: sqlServerFqdn }
  { name: 'OrdersSql__database', value: sqlDatabaseName }
  { name: 'SUPERVISOR_LEASE_CONTAINER', value: leaseContainerName }
  { name: 'PARTNER_URL', value: partnerUrl }
  // The retry budget counts the broker's deliveries of a request: keep the setting equal to the queue's.
  { name: 'AGENT_REQUEST_MAX_DELIVERIES', value: string(agentRequestMaxDeliveries) }
  // A data-protection decision of the deployment, so set here rather than left to the code's default.
  { name: 'RETENTION_DAYS', value: string(retentionDays) }
  // Resolved by the platform with the app's identity; the value never appears in the deployment.
  {
    name: 'DATA_PROTECTION_KEYS'
    value: '@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName=${dataProtectionSecretName})'
  }
]

// The Agents and the operator's partner controls send it as x-partner-key; like the key ring, read through the
// app's identity.
var partnerKeySettings = empty(partnerAccessKeySecretName)
  ? []
  : [
      {
        name: 'PARTNER_ACCESS_KEY'
        value: '@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName=${partnerAccessKeySecretName})'
      }
    ]

// With the Durable Task Scheduler: its connection, with the app's identity. The package's host.json names the
// scheduler as the storage provider through this setting (tools/function-app-package.ts, from DURABLE_BACKEND);
// no app setting overrides host.json's provider, since Flex Consumption's scale controller reads host.json alone
// (Azure/azure-functions-durable-extension#2622). AzureWebJobsStorage stays: the host keeps its keys, timers'
// schedules and the deployment package there.
var schedulerConnectionName = 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
var schedulerSettings = durableBackend != 'dts'
  ? []
  : [
      {
        name: schedulerConnectionName
        value: 'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'
      }
    ]

var appSettings = concat(commonSettings, partnerKeySettings, schedulerSettings)

resource plan 'Microsoft.Web/serverfarms@2025-03-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: { name: 'FC1', tier: 'FlexConsumption' }
  properties: { reserved: true }
}

resource app 'Microsoft.Web/sites@2025-03-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': serviceName })
  kind: 'functionapp,linux'
  identity: { type: 'UserAssigned', userAssignedIdentities: { '${identityId}': {} } }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    // Flex Consumption takes the subnet here; every outbound call of the app then leaves through it.
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    // App Service resolves the Key Vault references with this identity, granted each secret before the site exists.
    keyVaultReferenceIdentity: identityId
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storage.properties.primaryEndpoints.blob}${deploymentContainerName}'
          authentication: { type: 'UserAssignedIdentity', userAssignedIdentityResourceId: identityId }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
      }
      runtime: { name: 'node', version: nodeVersion }
    }
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      appSettings: appSettings
    }
  }
}

// Deployments (azd included) authenticate with Entra ID; publishing user names and passwords stay off.
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: app
  name: 'ftp'
  properties: { allow: false }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2025-03-01' = {
  parent: app
  name: 'scm'
  properties: { allow: false }
}

output name string = app.name
output id string = app.id
output defaultHostName string = app.properties.defaultHostName
