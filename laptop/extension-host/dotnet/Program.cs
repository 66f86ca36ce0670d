using System.Reflection;
using Microsoft.Azure.WebJobs;
using Microsoft.Azure.WebJobs.Extensions.DurableTask;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Newtonsoft.Json.Linq;

namespace Sas.ExtensionHost;

/// <summary>
/// Runs the app's orchestrations and activities on Microsoft's Durable Task extension, in a WebJobs
/// SDK host of its own, for the Node.js process that started it (sas host): that process sends the
/// app's durable functions and settings, answers every invocation through the app's own code, and
/// ends this one by saying stop or by closing the channel (when it dies, so does this).
/// </summary>
public static class Program
{
    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(30);

    public static async Task<int> Main()
    {
        WorkerChannel channel = WorkerChannel.OverStandardStreams();
        try
        {
            JObject start = channel.ReadStart();
            var functions = (start["functions"] as JArray ?? []).Select(FunctionSpec.From).ToList();
            using IHost host = ExtensionHostBuilder.Build(
                (string?)start["hostJson"] ?? throw new InvalidOperationException("start names no host.json"),
                new Uri((string?)start["webhookUrl"] ?? throw new InvalidOperationException("start names no webhook URL")),
                AppFunctions.Emit(functions));
            await host.StartAsync();
            string clientData = await HostFunctions.DurableClientDataAsync(host.Services.GetRequiredService<IJobHost>());
            // A signal to this process (SIGTERM) stops it as the worker's stop does.
            host.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(channel.RequestStop);
            channel.Send(Ready(host, clientData));
            await channel.Stopping;
            using var stopping = new CancellationTokenSource(StopTimeout);
            Task stopped = host.StopAsync(stopping.Token);
            if (await Task.WhenAny(stopped, Task.Delay(StopTimeout * 2)) != stopped)
                System.Diagnostics.Process.GetCurrentProcess().Kill();
            return 0;
        }
        catch (Exception error)
        {
            channel.Send(new JObject { ["type"] = "failed", ["message"] = error.ToString() });
            return 1;
        }
    }

    /// <summary>What the worker needs and says on start: the client's binding data, and what runs.</summary>
    private static JObject Ready(IHost host, string clientData)
    {
        DurableTaskOptions options = host.Services.GetRequiredService<IOptions<DurableTaskOptions>>().Value;
        return new JObject
        {
            ["type"] = "ready",
            ["clientData"] = Json.Parse(clientData),
            ["extensionVersion"] = VersionOf(typeof(DurableTaskExtension)),
            ["coreVersion"] = VersionOf(typeof(DurableTask.Core.TaskOrchestration)),
            ["azureStorageVersion"] = VersionOf(typeof(DurableTask.AzureStorage.AzureStorageOrchestrationService)),
            ["hubName"] = options.HubName,
            ["maxConcurrentActivityFunctions"] = options.MaxConcurrentActivityFunctions,
            ["maxConcurrentOrchestratorFunctions"] = options.MaxConcurrentOrchestratorFunctions,
            ["storageProvider"] = JObject.FromObject(options.StorageProvider),
        };
    }

    private static string VersionOf(Type type)
    {
        string? version = type.Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
        return (version ?? type.Assembly.GetName().Version?.ToString() ?? "unknown").Split('+')[0];
    }
}
