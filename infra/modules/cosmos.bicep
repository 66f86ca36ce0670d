// The state store: one Cosmos DB account with the state container of state-container.json and, in the
// same database, the Supervisor's recovery index of recovery-container.json. Keys are off (Entra ID and
// data-plane RBAC only), and continuous backup allows a point-in-time restore of every state record,
// compensation log included.

import { cosmosContainerType, tagsType } from '../types.bicep'

param accountName string
param location string
param tags tagsType
@description('The state container of state-container.json: database, id, partitionKey, indexingPolicy.')
param container cosmosContainerType
@description('The recovery index of recovery-container.json, in the state container\'s database (its own database field must name the same).')
param recoveryContainer cosmosContainerType
@description('Autoscale ceiling of the state container, in RU/s (it scales down to a tenth of it).')
param maxThroughput int = 1000
@description('Autoscale ceiling of the recovery index, in RU/s: every write of a record in flight also writes its entry.')
param recoveryMaxThroughput int = 1000
@description('Puts a CanNotDelete lock on the account.')
param protect bool

resource account 'Microsoft.DocumentDB/databaseAccounts@2026-03-15' = {
  name: accountName
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [
      { locationName: location, failoverPriority: 0, isZoneRedundant: false }
    ]
    consistencyPolicy: { defaultConsistencyLevel: 'Session' }
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: 'Enabled'
    backupPolicy: {
      type: 'Continuous'
      continuousModeProperties: { tier: 'Continuous30Days' }
    }
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2026-03-15' = {
  parent: account
  name: container.database
  properties: {
    resource: { id: container.database }
  }
}

resource stateContainer 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2026-03-15' = {
  parent: database
  name: container.id
  properties: {
    resource: {
      id: container.id
      partitionKey: container.partitionKey
      // Retention: terminal records carry their own ttl (src/adapters/cosmos/state-document.ts).
      defaultTtl: container.?defaultTtl
      indexingPolicy: container.indexingPolicy
    }
    options: {
      autoscaleSettings: { maxThroughput: maxThroughput }
    }
  }
}

resource recoveryIndex 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2026-03-15' = {
  parent: database
  name: recoveryContainer.id
  properties: {
    resource: {
      id: recoveryContainer.id
      partitionKey: recoveryContainer.partitionKey
      indexingPolicy: recoveryContainer.indexingPolicy
    }
    options: {
      autoscaleSettings: { maxThroughput: recoveryMaxThroughput }
    }
  }
}

resource deleteLock 'Microsoft.Authorization/locks@2020-05-01' = if (protect) {
  name: 'protect-state-store'
  scope: account
  properties: {
    level: 'CanNotDelete'
    notes: 'The order state records and compensation logs live here. Remove this lock before deleting.'
  }
}

output name string = account.name
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
