// Checks the T-SQL the SQL adapter sends (a JSON file written by tools/export-sql-statements.ts): each text
// parses as T-SQL, and the tables, columns and parameter types agree with the schema the migrations build.
// Prints what it checked; exits 1 on any finding, 2 on bad usage.
using SqlCheck;

if (args.Length != 1)
{
    Console.Error.WriteLine("usage: sql-check <statements.json>");
    return 2;
}

var statements = Statement.ReadAll(args[0]);
var findings = new List<Finding>();
var parsed = statements.Select(s => (statement: s, fragment: SyntaxCheck.Parse(s, findings)))
    .Where(p => !p.statement.ParseOnly)
    .ToList();
Console.WriteLine($"sql-check: {statements.Count} statements parsed with TSql160Parser, {findings.Count} syntax errors");

if (findings.Count == 0)
{
    var schema = new SchemaCheck();
    // Tables first, so that the statements' references resolve whatever order they were sent in.
    foreach (var (statement, fragment) in parsed.OrderBy(p => p.statement.Sql.Contains("CREATE TABLE", StringComparison.OrdinalIgnoreCase) ? 0 : 1))
        schema.Add(statement, fragment!);
    findings.AddRange(schema.Validate());
    var pairs = parsed.Sum(p => ParameterTypeCheck.Check(p.statement, p.fragment!, schema, findings));
    Console.WriteLine(
        $"sql-check: DacFx model of {schema.TableCount} tables and {schema.ProcedureCount} statements validated; " +
        $"{pairs} parameter/column pairs type-checked");
}

foreach (var finding in findings) Console.WriteLine($"error: {finding}");
Console.WriteLine(findings.Count == 0 ? "sql-check: no errors" : $"sql-check: {findings.Count} errors");
return findings.Count == 0 ? 0 : 1;
