using System.Collections.Concurrent;
using System.Text;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Sas.ExtensionHost;

/// <summary>
/// The line-delimited JSON channel to the Node.js process that holds the app, over this process's
/// standard input and output: what the Functions host's gRPC stream to its language worker is. This
/// process sends <c>ready</c> and <c>invoke</c>; the worker answers each invocation with a
/// <c>result</c> and ends with <c>stop</c>, after which it goes on answering until this process has
/// drained and exited. A stream that closes means the worker died (before or during that drain): this
/// process ends at once, as the Functions host dies with its worker, recording nothing of what was
/// running (the backend hands that work out again), rather than failing it as if the app had thrown.
/// </summary>
public sealed class WorkerChannel
{
    private readonly Stream output;
    private readonly TextReader input;
    private readonly object writeLock = new();
    private readonly ConcurrentDictionary<string, TaskCompletionSource<JObject>> pending = new();
    private readonly TaskCompletionSource stopping = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private long nextId;

    private WorkerChannel(Stream output, TextReader input)
    {
        this.output = output;
        this.input = input;
    }

    /// <summary>The channel the stubs invoke through; set once, at start.</summary>
    public static WorkerChannel Current { get; private set; } = null!;

    /// <summary>Completes when the worker asks to stop, or this process is asked to by a signal.</summary>
    public Task Stopping => this.stopping.Task;

    public void RequestStop() => this.stopping.TrySetResult();

    /// <summary>
    /// Takes standard output for the channel; anything else written to the console goes to standard
    /// error, so no library's line can corrupt a message.
    /// </summary>
    public static WorkerChannel OverStandardStreams()
    {
        Stream stdout = Console.OpenStandardOutput();
        Console.SetOut(Console.Error);
        var stdin = new StreamReader(Console.OpenStandardInput(), new UTF8Encoding(false));
        Current = new WorkerChannel(stdout, stdin);
        return Current;
    }

    /// <summary>Reads the first message, which must be <c>start</c>, then serves the rest on a thread of its own.</summary>
    public JObject ReadStart()
    {
        string? line = this.input.ReadLine();
        JObject start = line == null
            ? throw new InvalidOperationException("the worker closed the channel before sending start")
            : Json.ParseObject(line);
        if ((string?)start["type"] != "start")
            throw new InvalidOperationException($"expected a start message, got {(string?)start["type"]}");
        new Thread(this.ReadLoop) { IsBackground = true, Name = "worker-channel" }.Start();
        return start;
    }

    public void Send(JObject message)
    {
        byte[] bytes = Encoding.UTF8.GetBytes(message.ToString(Formatting.None) + "\n");
        lock (this.writeLock)
        {
            this.output.Write(bytes, 0, bytes.Length);
            this.output.Flush();
        }
    }

    /// <summary>Runs one function in the worker: its trigger's data and any other input's, as typed data.</summary>
    public async Task<JToken?> InvokeAsync(string functionName, JObject trigger, JObject? inputs)
    {
        string id = Interlocked.Increment(ref this.nextId).ToString();
        var answer = new TaskCompletionSource<JObject>(TaskCreationOptions.RunContinuationsAsynchronously);
        this.pending[id] = answer;
        this.Send(new JObject
        {
            ["type"] = "invoke",
            ["id"] = id,
            ["functionName"] = functionName,
            ["trigger"] = trigger,
            ["inputs"] = inputs,
        });
        JObject result = await answer.Task.ConfigureAwait(false);
        if ((bool?)result["ok"] == true) return result["returnValue"];
        throw new WorkerFunctionException((string?)result["error"] ?? "", (string?)result["stack"] ?? "");
    }

    private void ReadLoop()
    {
        string? line;
        while ((line = this.input.ReadLine()) != null)
        {
            JObject message = Json.ParseObject(line);
            string? type = (string?)message["type"];
            if (type == "result" && this.pending.TryRemove((string?)message["id"] ?? "", out var answer))
                answer.TrySetResult(message);
            else if (type == "stop")
                this.RequestStop();
        }
        // Nothing can answer what runs now, nor stop this process any more: end it, logging what was lost.
        Console.Error.WriteLine(new JObject
        {
            ["time"] = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'"),
            ["level"] = this.stopping.Task.IsCompleted && this.pending.IsEmpty ? "info" : "error",
            ["event"] = "extension.worker.lost",
            ["message"] = $"the worker closed the channel with {this.pending.Count} invocation(s) running; ending now",
        }.ToString(Formatting.None));
        System.Diagnostics.Process.GetCurrentProcess().Kill();
    }
}

/// <summary>
/// A function that failed in the worker, with the message the Functions host gives such a failure
/// (its RpcException's): the extension reads the worker's message, and an orchestrator's state, from it.
/// </summary>
public sealed class WorkerFunctionException(string message, string stack)
    : Exception($"Result: Failure\nException: {message}\nStack: {stack}");

/// <summary>JSON read as the extension reads its messages: dates stay strings.</summary>
public static class Json
{
    private static readonly JsonSerializerSettings Settings = new() { DateParseHandling = DateParseHandling.None };

    public static JToken Parse(string text) => JsonConvert.DeserializeObject<JToken>(text, Settings) ?? JValue.CreateNull();

    public static JObject ParseObject(string text) =>
        Parse(text) as JObject ?? throw new InvalidOperationException($"not a JSON object: {text}");
}
