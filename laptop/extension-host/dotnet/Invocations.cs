using Microsoft.Azure.WebJobs.Extensions.DurableTask;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Sas.ExtensionHost;

/// <summary>
/// What the emitted stubs call (<see cref="AppFunctions"/>): each hands its trigger's data to the
/// worker as the Functions host hands it to a Node.js worker, and gives the extension back what the
/// host would.
/// </summary>
public static class Invocations
{
    /// <summary>
    /// An orchestrator: the extension's context JSON (history, input, instance id) goes as a string;
    /// the SDK's orchestrator state comes back as JSON, and the extension's out-of-proc shim gets it
    /// parsed as the host parses it (dates left as strings; the shim's own parse of text would not).
    /// </summary>
    public static async Task<object?> Orchestrate(string functionName, string context)
    {
        JToken? returned = await WorkerChannel.Current
            .InvokeAsync(functionName, new JObject { ["string"] = context }, null)
            .ConfigureAwait(false);
        return TypedData.ToObject(returned);
    }

    /// <summary>
    /// An entity: the extension's batch of operations (the entity's state and each request) goes as a
    /// string; the SDK's results come back as JSON, parsed as the host parses it.
    /// </summary>
    public static Task<object?> RunEntity(string functionName, string batch) => Orchestrate(functionName, batch);

    /// <summary>An activity; <paramref name="client"/> is the extension's durable client binding data, when the function has one.</summary>
    public static async Task<object?> RunActivity(string functionName, IDurableActivityContext context, string? client)
    {
        JObject? inputs = client == null ? null : new JObject { ["durableClient"] = new JObject { ["string"] = client } };
        JToken? returned = await WorkerChannel.Current
            .InvokeAsync(functionName, TypedData.FromInput(context.GetInput<JToken>()), inputs)
            .ConfigureAwait(false);
        return TypedData.ToObject(returned);
    }

    public static Task<object?> Activity(string functionName, IDurableActivityContext context) =>
        RunActivity(functionName, context, null);

    public static Task<object?> ActivityWithClient(string functionName, IDurableActivityContext context, string client) =>
        RunActivity(functionName, context, client);
}

/// <summary>The worker protocol's typed data (RpcTypedData), in its JSON form on the channel.</summary>
public static class TypedData
{
    /// <summary>
    /// An input as the host passes it: a string as <c>string</c> (the SDK encodes string inputs itself,
    /// and the worker parses them back), anything else as <c>json</c>.
    /// </summary>
    public static JObject FromInput(JToken? input)
    {
        if (input is JValue { Type: JTokenType.String } text) return new JObject { ["string"] = (string?)text };
        return new JObject { ["json"] = input?.ToString(Formatting.None) ?? "null" };
    }

    /// <summary>A return value as the host reads one: a string, parsed JSON, a number, bytes, or nothing.</summary>
    public static object? ToObject(JToken? typed)
    {
        if (typed is not JObject data) return null;
        if (data["string"] is JValue text) return (string?)text;
        if (data["json"] is JValue json) return Json.Parse((string?)json ?? "null");
        if (data["int"] is JValue integer) return (long)integer;
        if (data["double"] is JValue number) return (double)number;
        if (data["bytes"] is JValue bytes) return Convert.FromBase64String((string?)bytes ?? "");
        return null;
    }
}
