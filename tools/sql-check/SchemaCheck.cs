using System.Text.RegularExpressions;
using Microsoft.SqlServer.Dac.Model;
using Microsoft.SqlServer.TransactSql.ScriptDom;

namespace SqlCheck;

/// <summary>
/// Builds the schema the migrations create into a DacFx model, then adds every other statement to it as
/// the body of a stored procedure that declares the statement's parameters, so that validating the model
/// resolves every table and column the statements name.
/// </summary>
public sealed class SchemaCheck
{
    /// <summary>System procedures: they live in master, which this model does not reference.</summary>
    private static readonly HashSet<string> SystemProcedures = new(StringComparer.OrdinalIgnoreCase) { "sp_getapplock" };

    /// <summary>How DacFx names the wrapping procedure in a message; the finding names the statement instead.</summary>
    private const string ProcedureWording = @"^Error validating element \[dbo\]\.\[sql_check_\d+\]: Procedure: \[dbo\]\.\[sql_check_\d+\] ";

    private readonly TSqlModel model = new(SqlServerVersion.SqlAzure, new TSqlModelOptions());
    private readonly Dictionary<string, string> procedureToStatement = new(StringComparer.OrdinalIgnoreCase);

    public int TableCount { get; private set; }
    public int ProcedureCount => procedureToStatement.Count;

    public void Add(Statement statement, TSqlFragment fragment)
    {
        var tables = new CreateTableFinder();
        fragment.Accept(tables);
        foreach (var table in tables.Found)
        {
            // Only the CREATE TABLE itself: a guard such as IF OBJECT_ID(...) IS NULL is not a model object.
            model.AddObjects(statement.Sql.Substring(table.StartOffset, table.FragmentLength));
            TableCount++;
        }
        if (tables.Found.Count > 0) return;

        var procedure = $"sql_check_{procedureToStatement.Count + 1}";
        procedureToStatement[procedure] = statement.Name;
        var parameters = string.Join(",\n  ", statement.Parameters.Select(p => $"@{p.Key} {p.Value}"));
        model.AddObjects($"CREATE PROCEDURE dbo.{procedure}\n  {parameters}\nAS\nBEGIN\n{statement.Sql}\nEND");
    }

    /// <summary>Every model error and warning, except unresolved references to system procedures.</summary>
    public IEnumerable<Finding> Validate()
    {
        foreach (var message in model.Validate())
        {
            var text = message.Message;
            var statement = procedureToStatement
                .Where(p => text.Contains($"[dbo].[{p.Key}]", StringComparison.OrdinalIgnoreCase))
                .Select(p => p.Value)
                .FirstOrDefault() ?? "schema";
            if (message.Number == 71502 && SystemProcedures.Any(sp => text.Contains($"[{sp}]", StringComparison.OrdinalIgnoreCase)))
                continue;
            yield return new Finding(statement,
                $"{message.MessageType} {message.Prefix}{message.Number}: {Regex.Replace(text, ProcedureWording, "the statement ")}");
        }
    }

    /// <summary>A column's type as the model has it, e.g. nvarchar with length 64.</summary>
    public SqlType? ColumnType(string schema, string table, string column)
    {
        var found = model.GetObject(ModelSchema.Table, new ObjectIdentifier(schema, table), DacQueryScopes.UserDefined)
            ?.GetReferenced(Table.Columns)
            .FirstOrDefault(c => string.Equals(c.Name.Parts[^1], column, StringComparison.OrdinalIgnoreCase));
        if (found is null) return null;
        var dataType = found.GetReferenced(Column.DataType).FirstOrDefault();
        if (dataType is null) return null;
        return new SqlType(
            dataType.Name.Parts[^1].ToLowerInvariant(),
            found.GetProperty<bool>(Column.IsMax) ? SqlType.Max : found.GetProperty<int>(Column.Length),
            found.GetProperty<int>(Column.Scale));
    }

    private sealed class CreateTableFinder : TSqlFragmentVisitor
    {
        public List<CreateTableStatement> Found { get; } = [];
        public override void Visit(CreateTableStatement node) => Found.Add(node);
    }
}
