// The orders database on Azure SQL, with Microsoft Entra authentication only (no SQL logins, no
// passwords). The deploying principal is the server's Entra administrator; the Function App's identity
// gets its database user from infra/scripts/grant-sql-access.sh, because ARM cannot create one.

import { tagsType } from '../types.bicep'

param serverName string
param databaseName string
param location string
param tags tagsType
@description('Object id of the Entra administrator: the deploying principal.')
param adminPrincipalId string
@allowed(['User', 'ServicePrincipal'])
param adminPrincipalType string
@description('Display name of the Entra administrator; the object id is what grants access.')
param adminLogin string = 'azd-deployer'
@description('Service objective of the orders database, e.g. S0, S2, GP_Gen5_2.')
param skuName string = 'S0'
param backupRetentionDays int = 14
@description('Puts a CanNotDelete lock on the database.')
param protect bool

resource server 'Microsoft.Sql/servers@2025-01-01' = {
  name: serverName
  location: location
  tags: tags
  properties: {
    minimalTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
    administrators: {
      administratorType: 'ActiveDirectory'
      azureADOnlyAuthentication: true
      login: adminLogin
      sid: adminPrincipalId
      tenantId: tenant().tenantId
      principalType: adminPrincipalType == 'ServicePrincipal' ? 'Application' : 'User'
    }
  }
}

// Flex Consumption has no fixed outbound addresses without a virtual network, so the server admits
// Azure-internal traffic (the 0.0.0.0 rule); every connection still needs an Entra token of a database user.
resource allowAzureServices 'Microsoft.Sql/servers/firewallRules@2025-01-01' = {
  parent: server
  name: 'AllowAllWindowsAzureIps'
  properties: {
    startIpAddress: '0.0.0.0'
    endIpAddress: '0.0.0.0'
  }
}

// A provisioned (always-on) tier: a serverless database that auto-pauses refuses connections while it
// resumes (error 40613), and those failures would reach the submission handler. Scale with skuName.
resource database 'Microsoft.Sql/servers/databases@2025-01-01' = {
  parent: server
  name: databaseName
  location: location
  tags: tags
  sku: { name: skuName }
  properties: {
    requestedBackupStorageRedundancy: 'Geo'
    zoneRedundant: false
  }
}

resource backupRetention 'Microsoft.Sql/servers/databases/backupShortTermRetentionPolicies@2025-01-01' = {
  parent: database
  name: 'default'
  properties: { retentionDays: backupRetentionDays }
}

resource deleteLock 'Microsoft.Authorization/locks@2020-05-01' = if (protect) {
  name: 'protect-orders-database'
  scope: database
  properties: {
    level: 'CanNotDelete'
    notes: 'The accepted orders live here. Remove this lock before deleting.'
  }
}

output serverName string = server.name
output fullyQualifiedDomainName string = server.properties.fullyQualifiedDomainName
output databaseName string = database.name
