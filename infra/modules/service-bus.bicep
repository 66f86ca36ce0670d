// The Service Bus namespace and its queues, defined in queues.json. Standard tier: duplicate detection
// needs it. SAS authentication is off, so every client signs in with Entra ID.

import { queuesType, tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType
@description('The queues of queues.json, keyed as QUEUE_NAMES in src/config/names.ts.')
param queues queuesType

resource namespace 'Microsoft.ServiceBus/namespaces@2026-01-01' = {
  name: name
  location: location
  tags: tags
  sku: { name: 'Standard', tier: 'Standard' }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

resource queue 'Microsoft.ServiceBus/namespaces/queues@2026-01-01' = [
  for entry in items(queues): {
    parent: namespace
    name: entry.value.name
    properties: {
      lockDuration: entry.value.lockDuration
      maxDeliveryCount: entry.value.maxDeliveryCount
      requiresDuplicateDetection: entry.value.requiresDuplicateDetection
      duplicateDetectionHistoryTimeWindow: entry.value.duplicateDetectionHistoryTimeWindow
      defaultMessageTimeToLive: entry.value.defaultMessageTimeToLive
      deadLetteringOnMessageExpiration: entry.value.deadLetteringOnMessageExpiration
      requiresSession: false
    }
  }
]

output name string = namespace.name
// The host name alone (`<name>.servicebus.windows.net` in the public cloud), as the SDK and the trigger take it.
output fullyQualifiedNamespace string = split(split(replace(namespace.properties.serviceBusEndpoint, 'https://', ''), ':')[0], '/')[0]
