// Log Analytics and workspace-based Application Insights. Local (instrumentation key) authentication is
// off: the app sends telemetry with its managed identity, as the Monitoring Metrics Publisher role allows.

import { tagsType } from '../types.bicep'

param logAnalyticsName string
param appInsightsName string
param location string
param tags tagsType
param retentionInDays int = 30

resource workspace 'Microsoft.OperationalInsights/workspaces@2026-03-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: { name: 'PerGB2018' }
    retentionInDays: retentionInDays
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    DisableLocalAuth: true
  }
}

output appInsightsName string = appInsights.name
output logAnalyticsName string = workspace.name
