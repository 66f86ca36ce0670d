// What the Function App's identity may do, what the storefront's and the simulated partner's may do, and the one
// thing the deploying principal needs besides being the SQL administrator: sending test orders (`sas send`). Azure
// SQL access is granted in the database itself (infra/scripts/grant-sql-access.sh), and the apps' reads of their
// Key Vault secrets in key-vault-secrets.bicep, each scoped to one secret.
//
// The storefront's status queue is private: only the storefront may receive from it. So no role that can
// receive (Data Receiver, Data Owner) is granted at the namespace or above; each is scoped to the queues
// its holder reads.

@description('The Function App\'s user-assigned identity (user-identity.bicep), granted before the app exists.')
param appPrincipalId string
@description('The storefront\'s system-assigned identity.')
param storefrontPrincipalId string
@description('The deploying principal; no assignment when empty.')
param deployerPrincipalId string
@allowed(['User', 'ServicePrincipal'])
param deployerPrincipalType string
param storageAccountName string
param serviceBusNamespaceName string
param cosmosAccountName string
param appInsightsName string
param keyVaultName string
@description('The queues a Service Bus trigger of the app reads (src/functions).')
param triggerQueueNames string[]
@description('The queues the app peeks without a trigger: the statistics read the parked messages (GET /api/stats).')
param peekedQueueNames string[]
@description('The queue the storefront sends orders to.')
param ordersQueueName string
@description('The storefront\'s private status queue: the storefront receives from it, the app sends to it.')
param storefrontStatusQueueName string
@description('Whether the simulated partner is deployed (partner.bicep); its roles are granted only then.')
param partnerDeployed bool
@description('The simulated partner\'s system-assigned identity; empty when it is not deployed.')
param partnerPrincipalId string
@description('The simulated partner\'s own storage account, where it keeps its books.')
param partnerStorageAccountName string
@description('Whether the Durable Task Scheduler is the durable backend (DURABLE_BACKEND=dts, durable-task.bicep).')
param useScheduler bool
@description('The Durable Task Scheduler\'s name, whether or not it is deployed.')
param schedulerName string

// Built-in Azure role definition ids: https://learn.microsoft.com/azure/role-based-access-control/built-in-roles
var roles = {
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageBlobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  storageTableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
  durableTaskDataContributor: '0ad04412-c4d5-4796-b79c-f76d14c8d402'
}

// Cosmos DB's data plane has its own RBAC, not Azure's: its built-in Data Contributor role definition.
var cosmosDataContributor = '00000000-0000-0000-0000-000000000002'

resource storage 'Microsoft.Storage/storageAccounts@2026-09-01' existing = {
  name: storageAccountName
}

resource serviceBus 'Microsoft.ServiceBus/namespaces@2026-01-01' existing = {
  name: serviceBusNamespaceName
}

resource triggerQueues 'Microsoft.ServiceBus/namespaces/queues@2026-01-01' existing = [
  for queueName in triggerQueueNames: {
    parent: serviceBus
    name: queueName
  }
]

resource peekedQueues 'Microsoft.ServiceBus/namespaces/queues@2026-01-01' existing = [
  for queueName in peekedQueueNames: {
    parent: serviceBus
    name: queueName
  }
]

resource ordersQueue 'Microsoft.ServiceBus/namespaces/queues@2026-01-01' existing = {
  parent: serviceBus
  name: ordersQueueName
}

resource storefrontStatusQueue 'Microsoft.ServiceBus/namespaces/queues@2026-01-01' existing = {
  parent: serviceBus
  name: storefrontStatusQueueName
}

// Named whether or not the partner is deployed, so that the scope below is a well-formed id either way.
resource partnerStorage 'Microsoft.Storage/storageAccounts@2026-09-01' existing = {
  name: partnerStorageAccountName
}

// Named whether or not it is deployed, so that the scope below is a well-formed id either way.
resource scheduler 'Microsoft.DurableTask/schedulers@2025-11-01' existing = {
  name: schedulerName
}

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2026-03-15' existing = {
  name: cosmosAccountName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource keyVault 'Microsoft.KeyVault/vaults@2026-05-15' existing = {
  name: keyVaultName
}

// The deployer writes the data-protection key ring and the partner's access key once (the postprovision hook);
// the apps read them through roles on each secret alone (key-vault-secrets.bicep).
resource deployerKeyVaultRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(deployerPrincipalId)) {
  name: guid(keyVault.id, deployerPrincipalId, roles.keyVaultSecretsOfficer)
  scope: keyVault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsOfficer)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}

// Host storage, the durable task hub (blobs, queues, tables), the lease blobs and the deployment package.
resource appStorageRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for role in [roles.storageBlobDataOwner, roles.storageQueueDataContributor, roles.storageTableDataContributor]: {
    name: guid(storage.id, appPrincipalId, role)
    scope: storage
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role)
      principalId: appPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

// Sending at namespace scope: the app replies to whatever status queue an order names in `replyTo`
// (the storefront's among them). Sending reads nothing.
resource appServiceBusSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(serviceBus.id, appPrincipalId, roles.serviceBusDataSender)
  scope: serviceBus
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// Peeking (Listen) on the queues the statistics read besides the triggered ones, which Data Owner covers below.
resource appPeekedQueueRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (queueName, i) in peekedQueueNames: {
    name: guid(peekedQueues[i].id, appPrincipalId, roles.serviceBusDataReceiver)
    scope: peekedQueues[i]
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataReceiver)
      principalId: appPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

// Target-based scaling on Flex Consumption: the scale controller reads each triggered queue's length
// with the app's identity, which takes the Manage right (Data Owner); with Receiver alone it falls back to
// the age of the first message and scales on a guess. Scoped to those queues only, not the namespace.
resource appTriggerQueueRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (queueName, i) in triggerQueueNames: {
    name: guid(triggerQueues[i].id, appPrincipalId, roles.serviceBusDataOwner)
    scope: triggerQueues[i]
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataOwner)
      principalId: appPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

resource appTelemetryRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, appPrincipalId, roles.monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.monitoringMetricsPublisher)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource appCosmosRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2026-03-15' = {
  parent: cosmos
  name: guid(cosmos.id, appPrincipalId, cosmosDataContributor)
  properties: {
    roleDefinitionId: '${cosmos.id}/sqlRoleDefinitions/${cosmosDataContributor}'
    principalId: appPrincipalId
    scope: cosmos.id
  }
}

resource deployerSenderRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(deployerPrincipalId)) {
  name: guid(serviceBus.id, deployerPrincipalId, roles.serviceBusDataSender)
  scope: serviceBus
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}

// The storefront: it sends orders and reads its own status queue, and nothing else in Service Bus.
resource storefrontOrdersSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(ordersQueue.id, storefrontPrincipalId, roles.serviceBusDataSender)
  scope: ordersQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
    principalId: storefrontPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource storefrontStatusReceiver 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storefrontStatusQueue.id, storefrontPrincipalId, roles.serviceBusDataReceiver)
  scope: storefrontStatusQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataReceiver)
    principalId: storefrontPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// The simulated partner: its books (an append-blob journal) in its own storage account, and nothing else here.
resource partnerLedgerRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (partnerDeployed) {
  name: guid(partnerStorage.id, partnerPrincipalId, roles.storageBlobDataContributor)
  scope: partnerStorage
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataContributor)
    principalId: partnerPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// The Durable Task Scheduler: the app runs its orchestrations there; the deployer sees them in its dashboard
// (and may act on them there, as the operator API does).
resource appSchedulerRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (useScheduler) {
  name: guid(scheduler.id, appPrincipalId, roles.durableTaskDataContributor)
  scope: scheduler
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.durableTaskDataContributor)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource deployerSchedulerRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (useScheduler && !empty(deployerPrincipalId)) {
  name: guid(scheduler.id, deployerPrincipalId, roles.durableTaskDataContributor)
  scope: scheduler
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.durableTaskDataContributor)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}
