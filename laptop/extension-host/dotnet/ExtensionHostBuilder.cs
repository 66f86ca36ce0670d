using Microsoft.Azure.WebJobs;
using Microsoft.Azure.WebJobs.Extensions.DurableTask;
using Microsoft.Azure.WebJobs.Host.Config;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Newtonsoft.Json.Linq;

namespace Sas.ExtensionHost;

/// <summary>
/// The WebJobs host, configured as the Functions host configures its own: host.json under the
/// <c>AzureFunctionsJobHost</c> section, which the SDK is told is its root, so the extension binds
/// <c>extensions.durableTask</c> from it; the app settings as environment variables after it (so
/// <c>AzureFunctionsJobHost__extensions__durableTask__...</c> overrides host.json, as in Azure, and
/// <c>%NAME%</c> in the hub name resolves to a setting); host.json's log levels (the storage SDK's
/// per-request lines at Warning unless it names them).
/// </summary>
public static class ExtensionHostBuilder
{
    private const string Root = "AzureFunctionsJobHost";

    public static IHost Build(string hostJsonPath, Uri webhookUrl, Type appFunctions) =>
        new HostBuilder()
            .ConfigureAppConfiguration(config => config
                .AddInMemoryCollection(HostJsonSettings(hostJsonPath))
                .AddEnvironmentVariables())
            .ConfigureWebJobs(webJobs => webJobs.AddDurableTask())
            .ConfigureLogging((context, logging) => logging
                .ClearProviders()
                // The storage SDK logs every request at Information; host.json may say otherwise.
                .AddFilter("Azure.Core", LogLevel.Warning)
                .AddConfiguration(context.Configuration.GetSection($"{Root}:logging"))
                .AddProvider(new JsonLineLoggerProvider(Console.Error)))
            .ConfigureServices(services =>
            {
                services.AddSingleton<ITypeLocator>(new FixedTypeLocator(appFunctions, typeof(HostFunctions)));
#pragma warning disable CS0618 // The Functions host's own way to give extensions their webhook URL.
                services.AddSingleton<IWebHookProvider>(new FixedWebHookProvider(webhookUrl));
#pragma warning restore CS0618
            })
            .Build();

    /// <summary>host.json's settings as configuration keys under the root section, as the Functions host reads them.</summary>
    public static Dictionary<string, string?> HostJsonSettings(string path)
    {
        var settings = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase)
        {
            ["AzureWebJobsConfigurationSection"] = Root,
        };
        Flatten(Json.ParseObject(File.ReadAllText(path)), Root, settings);
        return settings;
    }

    private static void Flatten(JToken token, string prefix, Dictionary<string, string?> settings)
    {
        switch (token)
        {
            case JObject json:
                foreach (JProperty property in json.Properties()) Flatten(property.Value, $"{prefix}:{property.Name}", settings);
                break;
            case JArray array:
                for (int i = 0; i < array.Count; i++) Flatten(array[i], $"{prefix}:{i}", settings);
                break;
            case JValue value:
                settings[prefix] = value.Type == JTokenType.Boolean ? ((bool)value ? "true" : "false") : (string?)value;
                break;
        }
    }
}

#pragma warning disable CS0618
/// <summary>Where the management links point: sas host's port, which serves them with the extension's system key.</summary>
public sealed class FixedWebHookProvider(Uri url) : IWebHookProvider
{
    public Uri GetUrl(IExtensionConfigProvider extension) => url;
}
#pragma warning restore CS0618
