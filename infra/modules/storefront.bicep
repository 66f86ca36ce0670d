// The storefront (storefront/main.ts): the pattern's submitting application, a Node.js web app on App Service
// for Linux with a system-assigned identity. It talks to the Scheduler only through Service Bus (identity-based,
// no key in any setting) and keeps its order book in SQLite on the app's persistent /home share.

import { tagsType } from '../types.bicep'

param name string
@description('The App Service plan it runs on (app-service-plan.bicep), shared with the simulated partner.')
param planId string
param location string
param tags tagsType
@description('The service name of azure.yaml; azd finds the app by this tag.')
param serviceName string
@description('Node.js major version of the runtime stack (NODE|<major>-lts).')
param nodeVersion string
param serviceBusNamespace string
param ordersQueueName string
param statusQueueName string
@description('Folder of the order book\'s SQLite file: under /home, the share that outlives restarts and deployments.')
param dataFolder string = '/home/data/storefront'
@description('Answers 200 without touching Service Bus; App Service probes it once a minute.')
param healthCheckPath string = '/api/catalogue'

// tsconfig.storefront.json compiles storefront/ (and what it imports of src/) into dist/storefront/, which the
// package carries as built.
var startCommand = 'node dist/storefront/storefront/main.js'

// Names follow storefront/settings.ts (test/infra keeps them in step); the rest are App Service's own.
// No Application Insights setting: storefront/main.ts writes JSON log lines to stdout (App Service's log
// stream) and starts no telemetry exporter, so nothing would read one.
var appSettings = [
  // azd uploads the package built locally (tools/web-app-package.ts): compiled, with only its runtime packages and
  // better-sqlite3 built for Linux x64 and this Node.js major. App Service runs it as it is, without a build.
  { name: 'SCM_DO_BUILD_DURING_DEPLOYMENT', value: 'false' }
  // The order book lives under /home: keep the persistent share mounted.
  { name: 'WEBSITES_ENABLE_APP_SERVICE_STORAGE', value: 'true' }
  { name: 'ServiceBusConnection__fullyQualifiedNamespace', value: serviceBusNamespace }
  { name: 'ORDERS_QUEUE', value: ordersQueueName }
  { name: 'STOREFRONT_STATUS_QUEUE', value: statusQueueName }
  { name: 'STOREFRONT_DATA', value: dataFolder }
]

resource site 'Microsoft.Web/sites@2025-03-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': serviceName })
  kind: 'app,linux'
  identity: { type: 'SystemAssigned' }
  properties: {
    serverFarmId: planId
    httpsOnly: true
    clientAffinityEnabled: false
    siteConfig: {
      linuxFxVersion: 'NODE|${nodeVersion}-lts'
      appCommandLine: startCommand
      // The status queue is read by a loop in the app, not on request: the app must not idle out.
      alwaysOn: true
      healthCheckPath: healthCheckPath
      minTlsVersion: '1.2'
      scmMinTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      appSettings: appSettings
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
output principalId string = site.identity.principalId
output defaultHostName string = site.properties.defaultHostName
