// The one way in to the simulated partner (partner.bicep): a virtual network whose subnet the Function App joins
// (Flex Consumption's virtual network integration, the subnet delegated to Microsoft.App/environments), with the
// Microsoft.Web service endpoint on it, so that App Service sees the Function App's calls to the partner arrive
// from this subnet, and the partner's access restriction can admit this subnet and nothing else. Virtual
// networks, subnets and service endpoints cost nothing. Deployed only with the simulated partner.

import { tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType
@description('The network\'s addresses; private, and used by nothing else of the deployment.')
param addressPrefix string = '10.60.0.0/24'
@description('The Function App\'s subnet: one address an instance (maximumInstanceCount, 40), and room for platform upgrades.')
param functionAppSubnetPrefix string = '10.60.0.0/25'

var functionAppSubnetName = 'function-app'

resource network 'Microsoft.Network/virtualNetworks@2026-03-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    addressSpace: { addressPrefixes: [addressPrefix] }
    subnets: [
      {
        name: functionAppSubnetName
        properties: {
          addressPrefix: functionAppSubnetPrefix
          delegations: [
            { name: 'flex-consumption', properties: { serviceName: 'Microsoft.App/environments' } }
          ]
          serviceEndpoints: [{ service: 'Microsoft.Web', locations: [location] }]
          // With the integration every outbound call of the Function App leaves through this subnet: Service Bus,
          // Cosmos DB, SQL, storage, Key Vault and Application Insights too, all at their public endpoints.
          // From API version 2025-07-01 a new subnet is private (no outbound access) unless told otherwise; this one
          // keeps the platform's default outbound access rather than add a NAT gateway (billed by the hour).
          defaultOutboundAccess: true
        }
      }
    ]
  }
}

resource functionAppSubnet 'Microsoft.Network/virtualNetworks/subnets@2026-03-01' existing = {
  parent: network
  name: functionAppSubnetName
}

output functionAppSubnetId string = functionAppSubnet.id
