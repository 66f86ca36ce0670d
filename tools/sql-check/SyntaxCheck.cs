using Microsoft.SqlServer.TransactSql.ScriptDom;

namespace SqlCheck;

/// <summary>Parses each statement as SQL Server 2022 / Azure SQL does (TSql160Parser).</summary>
public static class SyntaxCheck
{
    public static TSqlFragment? Parse(Statement statement, List<Finding> findings)
    {
        var parser = new TSql160Parser(initialQuotedIdentifiers: true);
        var fragment = parser.Parse(new StringReader(statement.Sql), out IList<ParseError> errors);
        foreach (var error in errors)
        {
            findings.Add(new Finding(statement.Name,
                $"line {error.Line}, column {error.Column}: {error.Message} (parse error {error.Number})"));
        }
        return errors.Count == 0 ? fragment : null;
    }
}
