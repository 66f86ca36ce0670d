import { DefaultAzureCredential, ManagedIdentityCredential } from "@azure/identity";
import { describe, expect, it } from "vitest";
import { azureCredential, credentialChoice } from "../../src/adapters/azure-credential.js";

const IN_AZURE = { IDENTITY_ENDPOINT: "http://localhost:42356/msi/token" };
const CLIENT_ID = "6f1d2c3b-4444-4a5b-8c6d-7e8f9a0b1c2d";

describe("F25-5: the app's credential is the managed identity it has, where it has one", () => {
  it("in Azure: the user-assigned identity AZURE_CLIENT_ID names, or the site's own without it", () => {
    expect(credentialChoice({ ...IN_AZURE, AZURE_CLIENT_ID: CLIENT_ID })).toEqual({
      kind: "managedIdentity",
      clientId: CLIENT_ID,
    });
    expect(credentialChoice(IN_AZURE)).toEqual({ kind: "managedIdentity" });
    expect(azureCredential({ ...IN_AZURE, AZURE_CLIENT_ID: CLIENT_ID })).toBeInstanceOf(
      ManagedIdentityCredential,
    );
    expect(azureCredential(IN_AZURE)).toBeInstanceOf(ManagedIdentityCredential);
  });

  it("a connection's own client id comes first", () => {
    const other = "11111111-2222-4333-8444-555555555555";
    expect(credentialChoice({ ...IN_AZURE, AZURE_CLIENT_ID: CLIENT_ID }, other)).toEqual({
      kind: "managedIdentity",
      clientId: other,
    });
  });

  it("without a managed identity (a laptop, a pipeline): the developer chain, whatever AZURE_CLIENT_ID says", () => {
    expect(credentialChoice({ AZURE_CLIENT_ID: CLIENT_ID })).toEqual({ kind: "developer" });
    expect(azureCredential({})).toBeInstanceOf(DefaultAzureCredential);
  });

  it("refuses a client id that is not a GUID, naming the setting", () => {
    expect(() => credentialChoice({ ...IN_AZURE, AZURE_CLIENT_ID: "func-orders" })).toThrow(
      /^AZURE_CLIENT_ID: expected the client id \(a GUID\)/,
    );
  });
});
