// The Functions host's storage: the durable task hub (queues, tables, blobs), the Supervisor's lease
// blobs and the Flex Consumption deployment package. Reached with Entra ID only: shared keys are off.

import { tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType
@description('Blob containers to create: the deployment package container and the lease container.')
param containerNames string[]
param softDeleteRetentionDays int = 7

resource account 'Microsoft.Storage/storageAccounts@2026-09-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: { name: 'Standard_LRS' }
  properties: {
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    allowBlobPublicAccess: false
    allowCrossTenantReplication: false
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2026-09-01' = {
  parent: account
  name: 'default'
  properties: {
    deleteRetentionPolicy: { enabled: true, days: softDeleteRetentionDays }
    containerDeleteRetentionPolicy: { enabled: true, days: softDeleteRetentionDays }
  }
}

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2026-09-01' = [
  for containerName in containerNames: {
    parent: blobService
    name: containerName
    properties: { publicAccess: 'None' }
  }
]

output name string = account.name
output blobEndpoint string = account.properties.primaryEndpoints.blob
