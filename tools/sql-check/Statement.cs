using System.Text.Json;
using System.Text.Json.Serialization;

namespace SqlCheck;

/// <summary>
/// One T-SQL text the SQL adapter sends, as tools/export-sql-statements.ts writes it; or, parse-only, a batch
/// of a script run against the database by other means (the deployment's hook), whose tables are not ours.
/// </summary>
public sealed record Statement(
    [property: JsonPropertyName("name")] string Name,
    [property: JsonPropertyName("sql")] string Sql,
    [property: JsonPropertyName("parameters")] Dictionary<string, string> Parameters,
    [property: JsonPropertyName("parseOnly")] bool ParseOnly = false)
{
    public static IReadOnlyList<Statement> ReadAll(string path) =>
        JsonSerializer.Deserialize<List<Statement>>(File.ReadAllText(path))
        ?? throw new InvalidDataException($"{path}: not a JSON array of statements");
}

/// <summary>A problem found, named by the statement it is in.</summary>
public sealed record Finding(string Statement, string Message)
{
    public override string ToString() => $"{Statement}: {Message}";
}
