using Microsoft.SqlServer.TransactSql.ScriptDom;

namespace SqlCheck;

/// <summary>
/// Pairs each parameter with the column it meets, in an INSERT's column list or in `column = @parameter`,
/// and compares the type the adapter declares with the column's type in the model.
/// </summary>
public static class ParameterTypeCheck
{
    public static int Check(Statement statement, TSqlFragment fragment, SchemaCheck schema, List<Finding> findings)
    {
        var visitor = new PairFinder();
        fragment.Accept(visitor);
        var pairs = 0;
        foreach (var (column, variable, stored) in visitor.Pairs)
        {
            var name = variable.TrimStart('@');
            if (!statement.Parameters.TryGetValue(name, out var declaration)) continue; // a local variable
            var candidates = visitor.Tables
                .Select(t => (table: t, type: schema.ColumnType(t.Schema, t.Name, column)))
                .Where(c => c.type is not null)
                .ToList();
            if (candidates.Count != 1)
            {
                findings.Add(new Finding(statement.Name,
                    $"column {column} (compared with {variable}) is in {candidates.Count} of the tables it names"));
                continue;
            }
            pairs++;
            var mismatch = SqlType.Parse(declaration).MismatchWith(candidates[0].type!, stored);
            if (mismatch is not null)
                findings.Add(new Finding(statement.Name, $"{variable} and {candidates[0].table.Name}.{column}: {mismatch}"));
        }
        return pairs;
    }

    private sealed class PairFinder : TSqlFragmentVisitor
    {
        public List<(string Column, string Variable, bool Stored)> Pairs { get; } = [];
        public HashSet<(string Schema, string Name)> Tables { get; } = [];

        public override void Visit(NamedTableReference node) =>
            Tables.Add((node.SchemaObject.SchemaIdentifier?.Value ?? "dbo", node.SchemaObject.BaseIdentifier.Value));

        public override void Visit(InsertSpecification node)
        {
            var values = node.InsertSource switch
            {
                SelectInsertSource { Select: QuerySpecification query } =>
                    query.SelectElements.Select(e => (e as SelectScalarExpression)?.Expression).ToList(),
                ValuesInsertSource { RowValues.Count: > 0 } source => source.RowValues[0].ColumnValues.Cast<ScalarExpression?>().ToList(),
                _ => [],
            };
            for (var i = 0; i < Math.Min(node.Columns.Count, values.Count); i++)
            {
                if (values[i] is VariableReference variable)
                    Pairs.Add((node.Columns[i].MultiPartIdentifier.Identifiers[^1].Value, variable.Name, true));
            }
        }

        public override void Visit(BooleanComparisonExpression node)
        {
            if (node.ComparisonType != BooleanComparisonType.Equals) return;
            if (node is { FirstExpression: ColumnReferenceExpression c1, SecondExpression: VariableReference v1 })
                Pairs.Add((c1.MultiPartIdentifier.Identifiers[^1].Value, v1.Name, false));
            else if (node is { FirstExpression: VariableReference v2, SecondExpression: ColumnReferenceExpression c2 })
                Pairs.Add((c2.MultiPartIdentifier.Identifiers[^1].Value, v2.Name, false));
        }
    }
}
