using Microsoft.Azure.WebJobs;
using Microsoft.Azure.WebJobs.Extensions.DurableTask;

namespace Sas.ExtensionHost;

/// <summary>This host's own function: reads the binding data the extension gives a durable client input.</summary>
public static class HostFunctions
{
    /// <summary>Its name; the worker refuses an app function of the same name.</summary>
    public const string ClientDataFunction = "sasDurableClientData";

    private static string? clientData;

    // A string is what an out-of-proc worker's client binding receives: the binding data as JSON.
#pragma warning disable DF0203
    [NoAutomaticTrigger]
    [FunctionName(ClientDataFunction)]
    public static void DurableClientData([DurableClient] string client) => clientData = client;
#pragma warning restore DF0203

    /// <summary>
    /// The binding data every durable client input of the app gets (the task hub, the management URLs
    /// and <c>rpcBaseUrl</c>, the extension's local HTTP endpoint), read once at start.
    /// </summary>
    public static async Task<string> DurableClientDataAsync(IJobHost host)
    {
        await host.CallAsync(ClientDataFunction);
        return clientData ?? throw new InvalidOperationException("the extension gave the durable client no binding data");
    }
}
