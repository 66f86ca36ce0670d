// The App Service plan for Linux that the storefront and the simulated partner share: both are small Node.js
// web apps, and apps on one plan share its instance, so the partner costs nothing beyond the storefront's plan.

import { tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType
@description('B1: the cheapest tier with Always On, which both apps need (the storefront\'s status receiver, the partner\'s journal).')
@allowed(['B1', 'B2', 'B3', 'S1', 'P0v3', 'P1v3'])
param skuName string = 'B1'

resource plan 'Microsoft.Web/serverfarms@2025-03-01' = {
  name: name
  location: location
  tags: tags
  kind: 'linux'
  // One instance, for both apps: the storefront's order book is one SQLite file, which two instances must not
  // share over the network share, and the partner's journal has one writer (partner/main.ts).
  sku: { name: skuName, capacity: 1 }
  properties: { reserved: true }
}

output id string = plan.id
output name string = plan.name
