using System.Text.RegularExpressions;

namespace SqlCheck;

/// <summary>A scalar T-SQL type: name, length for character types (Max for MAX), scale for time types.</summary>
public sealed record SqlType(string Name, int Length, int Scale)
{
    public const int Max = int.MaxValue;

    private static readonly HashSet<string> Sized = ["char", "nchar", "varchar", "nvarchar", "binary", "varbinary"];
    private static readonly HashSet<string> Scaled = ["datetime2", "datetimeoffset", "time"];

    /// <summary>A declaration as mssql writes it: `nvarchar (64)`, `nvarchar (MAX)`, `datetime2 (3)`, `bigint`.</summary>
    public static SqlType Parse(string declaration)
    {
        var match = Regex.Match(declaration.Trim(), @"^(\w+)\s*(?:\(\s*(MAX|\d+)\s*(?:,\s*(\d+)\s*)?\))?$", RegexOptions.IgnoreCase);
        if (!match.Success) throw new FormatException($"not a type declaration: {declaration}");
        var name = match.Groups[1].Value.ToLowerInvariant();
        var size = match.Groups[2].Value;
        var number = size.Equals("MAX", StringComparison.OrdinalIgnoreCase) ? Max : size == "" ? 0 : int.Parse(size);
        return Scaled.Contains(name) ? new SqlType(name, 0, size == "" ? 7 : number) : new SqlType(name, Sized.Contains(name) ? number : 0, 0);
    }

    /// <summary>Why a value of this type cannot be stored in, or compared with, a column of `column`'s type; null when it can.</summary>
    public string? MismatchWith(SqlType column, bool stored)
    {
        if (Name != column.Name) return $"a {this} value meets a {column} column (implicit conversion)";
        if (stored && Length > column.Length) return $"a {this} value may not fit a {column} column";
        if (stored && Scale > column.Scale) return $"a {this} value loses precision in a {column} column";
        return null;
    }

    public override string ToString() =>
        Sized.Contains(Name) ? $"{Name}({(Length == Max ? "max" : Length.ToString())})"
        : Scaled.Contains(Name) ? $"{Name}({Scale})"
        : Name;
}
