// Scheduler Agent Supervisor order processing: `azd up` provisions everything in one resource group.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('The azd environment name: it names the resource group and seeds the resource token.')
param environmentName string

@minLength(1)
// The regions that offer Flex Consumption, as Microsoft's Flex Consumption quickstart lists them (its canary region
// left out); `az functionapp list-flexconsumption-locations` prints the current list. azd offers only these.
@description('Region of every resource; one that offers Flex Consumption.')
@allowed([
  'australiaeast'
  'australiasoutheast'
  'brazilsouth'
  'canadacentral'
  'centralindia'
  'centralus'
  'eastasia'
  'eastus'
  'eastus2'
  'francecentral'
  'germanywestcentral'
  'italynorth'
  'japaneast'
  'koreacentral'
  'northcentralus'
  'northeurope'
  'norwayeast'
  'southafricanorth'
  'southcentralus'
  'southeastasia'
  'southindia'
  'spaincentral'
  'swedencentral'
  'uaenorth'
  'uksouth'
  'ukwest'
  'westcentralus'
  'westeurope'
  'westus'
  'westus2'
  'westus3'
])
@metadata({ azd: { type: 'location' } })
param location string

@description('Object id of the deploying principal (AZURE_PRINCIPAL_ID): the SQL administrator, allowed to send orders.')
param principalId string

@allowed(['User', 'ServicePrincipal'])
param principalType string = 'User'

@description('Base URL of a partner service of your own for the Agents to call (PARTNER_URL), reachable from Azure. Empty (the default): the deployment runs the simulated partner (partner/) and points the Agents at it.')
param partnerUrl string = ''

@description('Email address that receives operator alerts (ALERT_EMAIL); alerts fire without notification when empty.')
param alertEmail string = ''

@description('CanNotDelete locks on the state store and the orders database (PROTECT_DATA).')
param protectData bool = true

@minValue(15)
@maxValue(3650)
@description('Days a Processed or Compensated order\'s state record and orchestration history are kept (RETENTION_DAYS); Error and CompensationFailed orders are kept until an operator acts.')
param retentionDays int = 30

@description('The Durable Functions backend (DURABLE_BACKEND): azureStorage, the task hub in the host\'s storage account (the default); or dts, the Durable Task Scheduler (docs/deploy.md compares them).')
@allowed(['azureStorage', 'dts'])
param durableBackend string = 'azureStorage'

@description('How the Key Vault is deployed (KEY_VAULT_CREATE_MODE, set by the preprovision hook): recover brings back this environment\'s vault after `azd down`, which keeps it, and its name, for 90 days.')
@allowed(['default', 'recover'])
param keyVaultCreateMode string = 'default'

@description('Node.js major version of the Functions worker, the storefront and the simulated partner (NODE_VERSION): one Azure Functions supports and CI tests (package.json engines). 22 by default, the version Flex Consumption names its default Node.js stack and Microsoft\'s TypeScript Flex Consumption quickstart uses (supported to 30 April 2027); 24 is allowed (supported to 30 April 2028) where Flex Consumption offers it: `az functionapp list-flexconsumption-runtimes --location <region> --runtime node`.')
@allowed(['22', '24'])
param nodeVersion string = '22'

var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var tags = { 'azd-env-name': environmentName }
var serviceName = 'api'
var storefrontServiceName = 'storefront'
var partnerServiceName = 'partner'
var simulatePartner = empty(partnerUrl)
var queues = loadJsonContent('queues.json')
var stateContainer = loadJsonContent('state-container.json')
var recoveryContainer = loadJsonContent('recovery-container.json')
var deploymentContainerName = 'deployment-package'
var leaseContainerName = 'leases'
var taskHubName = 'Orders'
// The Key Vault secret holding DATA_PROTECTION_KEYS, created by infra/scripts/create-data-protection-keys.sh.
var dataProtectionSecretName = 'data-protection-keys'
// The Key Vault secret holding the simulated partner's access key, created by infra/scripts/create-partner-access-key.sh.
var partnerAccessKeySecretName = 'partner-access-key'
var partnerStorageAccountName = 'stpt${resourceToken}'
var useScheduler = durableBackend == 'dts'
var schedulerName = 'dts-${resourceToken}'

resource rg 'Microsoft.Resources/resourceGroups@2025-04-01' = {
  name: 'rg-${environmentName}'
  location: location
  tags: tags
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  scope: rg
  params: {
    logAnalyticsName: 'log-${resourceToken}'
    appInsightsName: 'appi-${resourceToken}'
    location: location
    tags: tags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  scope: rg
  params: {
    name: 'st${resourceToken}'
    location: location
    tags: tags
    containerNames: [deploymentContainerName, leaseContainerName]
  }
}

module serviceBus 'modules/service-bus.bicep' = {
  name: 'service-bus'
  scope: rg
  params: {
    name: 'sb-${resourceToken}'
    location: location
    tags: tags
    queues: queues
  }
}

module cosmos 'modules/cosmos.bicep' = {
  name: 'cosmos'
  scope: rg
  params: {
    accountName: 'cosmos-${resourceToken}'
    location: location
    tags: tags
    container: stateContainer
    recoveryContainer: recoveryContainer
    protect: protectData
  }
}

module sql 'modules/sql.bicep' = {
  name: 'sql'
  scope: rg
  params: {
    serverName: 'sql-${resourceToken}'
    databaseName: 'orders'
    location: location
    tags: tags
    adminPrincipalId: principalId
    adminPrincipalType: principalType
    protect: protectData
  }
}

module keyVault 'modules/key-vault.bicep' = {
  name: 'key-vault'
  scope: rg
  params: {
    name: 'kv-${resourceToken}'
    location: location
    tags: tags
    protect: protectData
    createMode: keyVaultCreateMode
  }
}

// Only with DURABLE_BACKEND=dts. Switching back to azureStorage later leaves it in place (azd provision deploys
// incrementally); the app then no longer uses it.
module durableTask 'modules/durable-task.bicep' = if (useScheduler) {
  name: 'durable-task'
  scope: rg
  params: {
    name: schedulerName
    location: location
    tags: tags
    taskHubName: taskHubName
  }
}

// The Function App's identity, made before the app so that every role it needs, its reads of the Key Vault secrets
// above all, is granted before the site first starts (the app's module depends on access and keyVaultSecrets).
module appIdentity 'modules/user-identity.bicep' = {
  name: 'app-identity'
  scope: rg
  params: {
    name: 'id-func-${resourceToken}'
    location: location
    tags: tags
  }
}

// The simulated partner's identity for its Key Vault reference (its books stay with its system-assigned identity).
module partnerIdentity 'modules/user-identity.bicep' = if (simulatePartner) {
  name: 'partner-identity'
  scope: rg
  params: {
    name: 'id-partner-${resourceToken}'
    location: location
    tags: tags
  }
}

// The secrets the apps read, created once before anyone reads them, and each app's grant on just its own.
module keyVaultSecrets 'modules/key-vault-secrets.bicep' = {
  name: 'key-vault-secrets'
  scope: rg
  params: {
    keyVaultName: keyVault.outputs.name
    dataProtectionSecretName: dataProtectionSecretName
    partnerAccessKeySecretName: simulatePartner ? partnerAccessKeySecretName : ''
    appPrincipalId: appIdentity.outputs.principalId
    partnerPrincipalId: simulatePartner ? partnerIdentity!.outputs.principalId : ''
  }
}

module functionApp 'modules/function-app.bicep' = {
  name: 'function-app'
  scope: rg
  params: {
    name: 'func-${resourceToken}'
    planName: 'plan-${resourceToken}'
    location: location
    tags: tags
    serviceName: serviceName
    nodeVersion: nodeVersion
    storageAccountName: storage.outputs.name
    deploymentContainerName: deploymentContainerName
    leaseContainerName: leaseContainerName
    taskHubName: taskHubName
    appInsightsName: monitoring.outputs.appInsightsName
    serviceBusNamespace: serviceBus.outputs.fullyQualifiedNamespace
    cosmosEndpoint: cosmos.outputs.endpoint
    cosmosDatabaseName: cosmos.outputs.databaseName
    sqlServerFqdn: sql.outputs.fullyQualifiedDomainName
    sqlDatabaseName: sql.outputs.databaseName
    partnerUrl: simulatePartner ? 'https://${partner!.outputs.defaultHostName}' : partnerUrl
    partnerAccessKeySecretName: simulatePartner ? partnerAccessKeySecretName : ''
    agentRequestMaxDeliveries: queues.agentRequests.maxDeliveryCount
    retentionDays: retentionDays
    keyVaultName: keyVault.outputs.name
    dataProtectionSecretName: dataProtectionSecretName
    durableBackend: durableBackend
    durableTaskSchedulerEndpoint: useScheduler ? durableTask!.outputs.endpoint : ''
    virtualNetworkSubnetId: simulatePartner ? partnerNetwork!.outputs.functionAppSubnetId : ''
    identityId: appIdentity.outputs.id
    identityClientId: appIdentity.outputs.clientId
  }
  // Its roles and its grants on the secrets exist before the site starts and resolves its Key Vault references.
  dependsOn: [access, keyVaultSecrets]
}

// The storefront's plan since before the partner joined it, hence its name.
module appServicePlan 'modules/app-service-plan.bicep' = {
  name: 'app-service-plan'
  scope: rg
  params: {
    name: 'plan-store-${resourceToken}'
    location: location
    tags: tags
  }
}

module storefront 'modules/storefront.bicep' = {
  name: 'storefront'
  scope: rg
  params: {
    name: 'app-store-${resourceToken}'
    planId: appServicePlan.outputs.id
    location: location
    tags: tags
    serviceName: storefrontServiceName
    nodeVersion: nodeVersion
    serviceBusNamespace: serviceBus.outputs.fullyQualifiedNamespace
    ordersQueueName: queues.orders.name
    statusQueueName: queues.storefrontStatus.name
  }
}

// The Function App's subnet, which the simulated partner admits and nothing else; only with the simulated partner.
// Switching to a partner of your own later leaves the network in place (it costs nothing), and takes the Function
// App off it.
module partnerNetwork 'modules/partner-network.bicep' = if (simulatePartner) {
  name: 'partner-network'
  scope: rg
  params: {
    name: 'vnet-${resourceToken}'
    location: location
    tags: tags
  }
}

// Only when no partnerUrl is given. Switching to a partner of your own later leaves the site and its storage
// in place (azd provision deploys incrementally); the Function App then neither calls it nor holds its key.
module partner 'modules/partner.bicep' = if (simulatePartner) {
  name: 'partner'
  scope: rg
  params: {
    name: 'app-partner-${resourceToken}'
    location: location
    tags: tags
    serviceName: partnerServiceName
    nodeVersion: nodeVersion
    planId: appServicePlan.outputs.id
    storageAccountName: partnerStorageAccountName
    keyVaultName: keyVault.outputs.name
    accessKeySecretName: partnerAccessKeySecretName
    functionAppSubnetId: partnerNetwork!.outputs.functionAppSubnetId
    keyVaultReferenceIdentityId: partnerIdentity!.outputs.id
  }
  // Its grant on the access key exists before the site resolves its Key Vault reference.
  dependsOn: [keyVaultSecrets]
}

module access 'modules/access.bicep' = {
  name: 'access'
  scope: rg
  params: {
    appPrincipalId: appIdentity.outputs.principalId
    storefrontPrincipalId: storefront.outputs.principalId
    deployerPrincipalId: principalId
    deployerPrincipalType: principalType
    storageAccountName: storage.outputs.name
    serviceBusNamespaceName: serviceBus.outputs.name
    cosmosAccountName: cosmos.outputs.name
    appInsightsName: monitoring.outputs.appInsightsName
    keyVaultName: keyVault.outputs.name
    triggerQueueNames: [queues.orders.name, queues.agentRequests.name, queues.agentResponses.name]
    peekedQueueNames: [queues.invalidMessages.name]
    ordersQueueName: queues.orders.name
    storefrontStatusQueueName: queues.storefrontStatus.name
    partnerDeployed: simulatePartner
    partnerPrincipalId: simulatePartner ? partner!.outputs.principalId : ''
    partnerStorageAccountName: partnerStorageAccountName
    useScheduler: useScheduler
    schedulerName: schedulerName
  }
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  scope: rg
  params: {
    location: location
    tags: tags
    serviceBusNamespaceName: serviceBus.outputs.name
    invalidMessagesQueueName: queues.invalidMessages.name
    appInsightsName: monitoring.outputs.appInsightsName
    alertEmail: alertEmail
  }
}

// azd writes these to the environment (.azure/<env>/.env); the post-provision hook and `sas send` read them.
output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
output AZURE_FUNCTION_APP_ID string = functionApp.outputs.id
output AZURE_FUNCTION_APP_PRINCIPAL_ID string = appIdentity.outputs.principalId
output AZURE_FUNCTION_APP_CLIENT_ID string = appIdentity.outputs.clientId
output AZURE_FUNCTION_APP_URL string = 'https://${functionApp.outputs.defaultHostName}'
output AZURE_STOREFRONT_NAME string = storefront.outputs.name
output STOREFRONT_URL string = 'https://${storefront.outputs.defaultHostName}'
output AZURE_SQL_SERVER_NAME string = sql.outputs.serverName
output AZURE_SQL_SERVER_FQDN string = sql.outputs.fullyQualifiedDomainName
output AZURE_SQL_DATABASE string = sql.outputs.databaseName
output AZURE_COSMOS_ENDPOINT string = cosmos.outputs.endpoint
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
output AZURE_KEY_VAULT_ID string = keyVault.outputs.id
output AZURE_DATA_PROTECTION_SECRET_NAME string = dataProtectionSecretName
// The simulated partner, or empty strings when the deployment calls a partner of the user's. Not named
// PARTNER_URL: azd would write it into the environment, and the next provision would read it as the parameter.
output AZURE_PARTNER_NAME string = simulatePartner ? partner!.outputs.name : ''
output AZURE_PARTNER_ID string = simulatePartner ? partner!.outputs.id : ''
output AZURE_PARTNER_PRINCIPAL_ID string = simulatePartner ? partner!.outputs.principalId : ''
output AZURE_PARTNER_URL string = simulatePartner ? 'https://${partner!.outputs.defaultHostName}' : partnerUrl
output AZURE_PARTNER_ACCESS_SECRET_NAME string = simulatePartner ? partnerAccessKeySecretName : ''
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
output AZURE_DURABLE_BACKEND string = durableBackend
// Empty with the azureStorage backend. The dashboard needs a Durable Task data role, which the deployer holds.
output AZURE_DURABLE_TASK_SCHEDULER_ENDPOINT string = useScheduler ? durableTask!.outputs.endpoint : ''
output AZURE_DURABLE_TASK_DASHBOARD_URL string = useScheduler ? durableTask!.outputs.dashboardUrl : ''
output ServiceBusConnection__fullyQualifiedNamespace string = serviceBus.outputs.fullyQualifiedNamespace
