using Microsoft.Extensions.Logging;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Sas.ExtensionHost;

/// <summary>
/// Log lines in sas host's own shape, one JSON object a line on standard error:
/// <c>{ time, level, event: "extension.log", category, message }</c>, and the exception's when there
/// is one; a record without either (telemetry for Application Insights) is left out.
/// </summary>
public sealed class JsonLineLoggerProvider(TextWriter output) : ILoggerProvider
{
    private readonly object writeLock = new();

    public ILogger CreateLogger(string categoryName) => new JsonLineLogger(this, categoryName);

    public void Dispose() { }

    private void Write(JObject line)
    {
        string text = line.ToString(Formatting.None);
        lock (this.writeLock) output.WriteLine(text);
    }

    private sealed class JsonLineLogger(JsonLineLoggerProvider provider, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            string message = formatter(state, exception);
            // The host's result and aggregate records carry data for Application Insights, no message.
            if (string.IsNullOrEmpty(message) && exception == null) return;
            var line = new JObject
            {
                ["time"] = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'"),
                ["level"] = LevelOf(logLevel),
                ["event"] = "extension.log",
                ["category"] = category,
                ["message"] = message,
            };
            if (exception != null) line["exception"] = exception.ToString();
            provider.Write(line);
        }

        private static string LevelOf(LogLevel level) => level switch
        {
            LogLevel.Trace or LogLevel.Debug => "debug",
            LogLevel.Information => "info",
            LogLevel.Warning => "warn",
            _ => "error",
        };
    }
}
