// The secrets the apps read through Key Vault references, and who may read each: Key Vault Secrets User scoped to
// the one secret, for the user-assigned identity each app resolves its references with. A role can be scoped to a
// secret only once the secret exists, so each is created here, once (@onlyIfNotExists: a deployment never touches
// an existing secret, whose value a later provision must keep), before the grants and so before the sites. Its
// first value is a placeholder marked by its content type; the postprovision hook replaces it with the real value
// (infra/scripts/create-data-protection-keys.sh, create-partner-access-key.sh). ARM cannot make that value: the key
// ring is 32 random bytes, which no template function gives. The placeholder starts like a Key Vault reference,
// so an app that reads it before the hook has run refuses to start as for a reference not yet resolved, naming the
// setting and `azd hooks run postprovision`.

@description('The deployment\'s Key Vault (key-vault.bicep).')
param keyVaultName string
@description('The secret holding the data-protection key ring (DATA_PROTECTION_KEYS of the Function App).')
param dataProtectionSecretName string
@description('The secret holding the simulated partner\'s access key (PARTNER_ACCESS_KEY of both apps); empty without the simulated partner.')
param partnerAccessKeySecretName string
@description('The Function App\'s user-assigned identity: it reads both secrets.')
param appPrincipalId string
@description('The simulated partner\'s user-assigned identity, which reads its access key only; empty without it.')
param partnerPrincipalId string

// Key Vault Secrets User: reads a secret's value, nothing else.
var secretsUser = subscriptionResourceId('Microsoft.Authorization/roleDefinitions', '4633458b-17de-408a-b874-0445c86b69e6')
var withPartner = !empty(partnerAccessKeySecretName)

@description('The content type that marks a secret the postprovision hook has not written yet.')
var placeholderType = 'placeholder'
var placeholderValue = '@Microsoft.KeyVault(not written yet): run azd hooks run postprovision'

resource vault 'Microsoft.KeyVault/vaults@2026-05-15' existing = {
  name: keyVaultName
}

@onlyIfNotExists()
resource dataProtectionSecret 'Microsoft.KeyVault/vaults/secrets@2026-05-15' = {
  parent: vault
  name: dataProtectionSecretName
  properties: { value: placeholderValue, contentType: placeholderType }
}

@onlyIfNotExists()
resource partnerKeySecret 'Microsoft.KeyVault/vaults/secrets@2026-05-15' = if (withPartner) {
  parent: vault
  name: withPartner ? partnerAccessKeySecretName : 'unused'
  properties: { value: placeholderValue, contentType: placeholderType }
}

resource appReadsKeyRing 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(dataProtectionSecret.id, appPrincipalId, secretsUser)
  scope: dataProtectionSecret
  properties: { roleDefinitionId: secretsUser, principalId: appPrincipalId, principalType: 'ServicePrincipal' }
}

resource appReadsPartnerKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (withPartner) {
  name: guid(partnerKeySecret.id, appPrincipalId, secretsUser)
  scope: partnerKeySecret
  properties: { roleDefinitionId: secretsUser, principalId: appPrincipalId, principalType: 'ServicePrincipal' }
}

resource partnerReadsPartnerKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (withPartner) {
  name: guid(partnerKeySecret.id, partnerPrincipalId, secretsUser)
  scope: partnerKeySecret
  properties: { roleDefinitionId: secretsUser, principalId: partnerPrincipalId, principalType: 'ServicePrincipal' }
}

output placeholderContentType string = placeholderType
