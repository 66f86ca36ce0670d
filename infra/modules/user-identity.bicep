// A user-assigned managed identity: an app's identity that exists before the app does, so that its roles, and
// its reads of Key Vault secrets above all, are granted before the site starts and first resolves its Key Vault
// references (main.bicep has the sites depend on those grants).

import { tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2024-11-30' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output principalId string = identity.properties.principalId
output clientId string = identity.properties.clientId
